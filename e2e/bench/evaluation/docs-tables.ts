/**
 * The tables of docs/evaluation.md ("Results of issue 11") and of the README's summary, made
 * from the rows of results.json, so that they are never typed by hand: results.md carries
 * them, and `npm run docs:evaluation` (scripts/docs-evaluation.ts) writes them between marker
 * comments into the docs.
 */
import { GOALS, agreementRows, goalsMarkdown, withinTenPercent } from './goals.js';
import type { ResultRow } from './rows.js';

/** The policies of the per-policy table, in this order (those present); round-robin and the optimal-complete baseline are in results.md. */
const CELL_POLICIES = ['webpp', 'webpp-fast', 'webpp-paper', 'hedged', 'random', 'single-A', 'single-B', 'single-C', 'optimal'] as const;

const fixed = (value: number | undefined, digits: number): string => (value !== undefined && Number.isFinite(value) ? value.toFixed(digits) : 'n/a');
const worstOf = (row: ResultRow, field: 'relative_to_optimal' | 'relative_p95_to_optimal' | 'extra_requests_pct' | 'failed_requests'): number => row.range?.[field]?.[1] ?? row[field];

/** One cell: mean ÷ optimal-complete (range over runs) / p95 ÷ optimal-complete's p95 / extra requests / failed requests. */
function cell(row: ResultRow | undefined): string {
  if (!row) return '–';
  const range = row.runs > 1 ? row.range?.relative_to_optimal : undefined;
  const mean = `${fixed(row.relative_to_optimal, 2)}${range ? ` (${fixed(range[0], 2)}–${fixed(range[1], 2)})` : ''}`;
  return `${mean} / ${fixed(row.relative_p95_to_optimal, 2)} / ${fixed(row.extra_requests_pct, 1)}% / ${row.failed_requests}`;
}

/** Policies × scenarios, one cell each (medians over the runs). */
export function policyCellsMarkdown(rows: readonly ResultRow[], scenarios: readonly string[]): string[] {
  const present = scenarios.filter((scenario) => rows.some((row) => row.scenario === scenario));
  const out = [
    'Each cell: mean ÷ optimal-complete\'s (range over runs) / p95 ÷ optimal-complete\'s p95 / extra requests / failed requests' +
      `${rows.some((row) => row.runs > 1) ? `, medians of ${Math.max(...rows.map((row) => row.runs))} runs` : ', one run'}:`,
    '',
    `| policy | ${present.join(' | ')} |`,
    `| --- | ${present.map(() => '---').join(' | ')} |`,
  ];
  for (const policy of CELL_POLICIES) {
    if (!rows.some((row) => row.policy === policy)) continue;
    out.push(`| ${policy} | ${present.map((scenario) => cell(rows.find((row) => row.scenario === scenario && row.policy === policy))).join(' | ')} |`);
  }
  return out;
}

/** The goals table of docs/evaluation.md: the one results.md prints (goals.ts), under its heading line. */
export function goalsTableMarkdown(rows: readonly ResultRow[]): string[] {
  const runs = Math.max(...rows.map((row) => row.runs));
  return [runs > 1 ? `Against the goals of issue 11 (met only if met in all ${runs} runs: the worst end of each range):` : 'Against the goals of issue 11 (one run):', '', ...goalsMarkdown(rows)];
}

/** The README's summary: each goal for `webpp` beside `webpp-paper`, and whether `webpp` met it. */
export function readmeSummaryMarkdown(rows: readonly ResultRow[]): string[] {
  const mine = (policy: string): ResultRow[] => rows.filter((row) => row.policy === policy);
  const webpp = mine('webpp');
  const paper = mine('webpp-paper');
  if (webpp.length === 0) return ['(no `webpp` rows in results.json)'];
  const span = (list: readonly ResultRow[], field: 'relative_to_optimal' | 'relative_p95_to_optimal' | 'extra_requests_pct', digits: number, unit = ''): string => {
    const values = list.map((row) => row[field]);
    return values.length === 0 ? '–' : `${fixed(Math.min(...values), digits)}–${fixed(Math.max(...values), digits)}${unit}`;
  };
  const byScenario = (list: readonly ResultRow[], field: 'relative_to_optimal' | 'relative_p95_to_optimal'): string =>
    [...list].sort((a, b) => a[field] - b[field]).map((row) => `${row.scenario} ${fixed(row[field], 2)}`).join(', ');
  // "met" only when every run met it (the worst end of the range); the count is by the median.
  const metAll = (field: 'relative_to_optimal' | 'relative_p95_to_optimal', goal: number): boolean => webpp.every((row) => worstOf(row, field) <= goal);
  const metIn = (field: 'relative_to_optimal' | 'relative_p95_to_optimal', goal: number): number => webpp.filter((row) => row[field] <= goal).length;
  const peak = (list: readonly ResultRow[]): string => {
    const row = list.find((candidate) => candidate.scenario === 'peak');
    if (!row) return '–';
    const range = row.runs > 1 ? row.range?.better_than_mean_single : undefined;
    return `${fixed(row.better_than_mean_single * 100, 1)} %${range ? ` (${fixed(range[0] * 100, 1)}–${fixed(range[1] * 100, 1)} %)` : ''}`;
  };
  const peakRow = webpp.find((row) => row.scenario === 'peak');
  const complete = rows.find((row) => row.scenario === 'peak' && row.policy === 'optimal-complete');
  const failedRuns = webpp.filter((row) => worstOf(row, 'failed_requests') > 0);
  const compared = agreementRows(rows);
  const agreeing = compared.filter(withinTenPercent).length;
  const n = webpp.length;
  const yes = (met: boolean): string => (met ? '**yes**' : 'no');
  return [
    '| goal of issue 11 | `webpp` (the new default) | `webpp-paper` (the paper\'s values) | met? |',
    '|---|---|---|---|',
    `| mean ≤ ${GOALS.meanRatio.toFixed(2)}× optimal, every scenario | ${byScenario(webpp, 'relative_to_optimal')} | ${span(paper, 'relative_to_optimal', 2)} | ${yes(metAll('relative_to_optimal', GOALS.meanRatio))} (${metIn('relative_to_optimal', GOALS.meanRatio)} of ${n} by the median) |`,
    `| p95 ≤ ${GOALS.p95Ratio}× optimal's p95 | ${byScenario(webpp, 'relative_p95_to_optimal')} | ${span(paper, 'relative_p95_to_optimal', 2)} | ${yes(metAll('relative_p95_to_optimal', GOALS.p95Ratio))} (${metIn('relative_p95_to_optimal', GOALS.p95Ratio)} of ${n} by the median) |`,
    `| extra requests ≤ ${GOALS.extraRequestsPct} % (hedges, refreshes, probes, resumes) | ${span(webpp, 'extra_requests_pct', 1, ' %')} | ${span(paper, 'extra_requests_pct', 1, ' %')} | ${yes(webpp.every((row) => worstOf(row, 'extra_requests_pct') <= GOALS.extraRequestsPct))} |`,
    `| failed requests: 0 | ${failedRuns.length === 0 ? '0 in every scenario and run' : failedRuns.map((row) => `${row.scenario} ${row.failed_requests}`).join(', ')} | ${paper.filter((row) => row.failed_requests > 0).length === 0 ? '0' : 'some'} | ${yes(failedRuns.length === 0)} |`,
    `| peak: ≥ ${GOALS.peakGainOverMeanSingle * 100} % better than the mean single server (paper: 47.8 %) | ${peak(webpp)} | ${peak(paper)} | ${yes(peakRow !== undefined && (peakRow.range?.better_than_mean_single?.[0] ?? peakRow.better_than_mean_single) >= GOALS.peakGainOverMeanSingle)}${complete ? ` (optimal-complete: ${fixed(complete.better_than_mean_single * 100, 1)} %)` : ''} |`,
    `| browser within ±10 % of the simulator on ≥ ${GOALS.agreementShare * 100} % of rows | ${agreeing} of ${compared.length} rows (${fixed((agreeing / Math.max(1, compared.length)) * 100, 0)} %), the baselines left out | | ${yes(agreeing >= GOALS.agreementShare * compared.length)} |`,
  ];
}
