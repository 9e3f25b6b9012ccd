/**
 * The tables of issue 22 ("no regret") in the README and docs/evaluation.md, made from the
 * committed results so that they are never typed by hand (docs-evaluation.ts writes them):
 * the nine scenarios against the best direct single replica and freecdn (results.json), and
 * the generated worlds in Chromium (evaluation-generated.json).
 */
import { goalsTable, worldsTable } from './generated/report.js';
import type { GeneratedSummary, GoalCheck } from './generated/report.js';
import type { GeneratedRow } from './generated/rows.js';
import { DIRECT_PREFIX } from './policies.js';
import type { RunInfo } from './report.js';
import type { ResultRow } from './rows.js';

/** What evaluation-generated.json holds (evaluation-generated.bench.ts). */
export interface GeneratedDocument {
  info: {
    command: string;
    runs: number;
    engine: string;
    chromium: string;
    wallSeconds: number;
    skipped?: { run: number; seed: number; error: string }[];
    /** Worlds measured again apart from the run, after a harness failure. */
    rerun?: { seed: number; why: string; command: string; engine: string }[];
  };
  summary: GeneratedSummary;
  goals: GoalCheck[];
  rows: GeneratedRow[];
}

const fixed = (value: number | undefined, digits = 2): string => (value !== undefined && Number.isFinite(value) ? value.toFixed(digits) : 'n/a');
const yes = (met: boolean): string => (met ? '**yes**' : 'no');

/** "Figures from 3 runs on 2026-11-24, 13:37–14:11 UTC (…)": when, how and on what results.json was measured. */
export function runLineMarkdown(info: RunInfo): string[] {
  const first = info.runs[0];
  if (!first) return ['(no runs in results-runs.json)'];
  const last = info.runs.at(-1)!;
  const end = new Date(Date.parse(last.startedAt) + last.wallSeconds * 1000).toISOString();
  const loads = info.runs.map((run) => Number(run.loadAverage.split(',')[0]));
  return [
    `Figures from ${info.runs.length} run${info.runs.length === 1 ? '' : 's'} on ${first.startedAt.slice(0, 10)}, ${first.startedAt.slice(11, 16)}–${end.slice(11, 16)} UTC ` +
      `(\`${info.command}\`${info.engine ? `, code ${info.engine}` : ''}, Chromium ${info.chromium}; load average at the start ${Math.min(...loads).toFixed(1)}–${Math.max(...loads).toFixed(1)} on 2 cores), ` +
      `from [docs/benchmarks/results.json](docs/benchmarks/results.json).`,
  ];
}

/** Issue 22's goals on the nine scenarios, for `webpp`, against the best direct single replica, optimal-complete and freecdn. */
export function regretGoalsMarkdown(rows: readonly ResultRow[]): string[] {
  const webpp = rows.filter((row) => row.policy === 'webpp');
  if (webpp.length === 0 || !rows.some((row) => row.policy.startsWith(DIRECT_PREFIX))) {
    return ['(results.json has no `direct-<server>` rows yet: `npm run bench evaluation` measures them)'];
  }
  const freecdn = new Map(rows.filter((row) => row.policy === 'freecdn').map((row) => [row.scenario, row]));
  const n = webpp.length;
  const noRegret = webpp.filter((row) => row.relative_to_best_single <= 1);
  const worstRegret = [...webpp].sort((a, b) => b.relative_to_best_single - a.relative_to_best_single)[0]!;
  const meanRatio = webpp.reduce((sum, row) => sum + row.relative_to_optimal_complete, 0) / n;
  const worstOptimal = [...webpp].sort((a, b) => b.relative_to_optimal_complete - a.relative_to_optimal_complete)[0]!;
  const beaten = webpp.filter((row) => freecdn.has(row.scenario) && row.mean_ms > freecdn.get(row.scenario)!.mean_ms);
  const failed = webpp.filter((row) => row.failed_requests > 0);
  return [
    '| goal of issue 22 (nine scenarios, `webpp`) | measured (medians over the runs) | met? |',
    '|---|---|---|',
    `| mean no worse than the best single replica fetched directly (no worker), every scenario | ${noRegret.length} of ${n}; worst ${worstRegret.scenario} ${fixed(worstRegret.relative_to_best_single)}× (best single there: ${worstRegret.best_single}) | ${yes(noRegret.length === n)} |`,
    `| mean ≤ 1.10× optimal-complete on average over scenarios | ${fixed(meanRatio)}× | ${yes(meanRatio <= 1.1)} |`,
    `| mean ≤ 1.3× optimal-complete in every scenario | worst ${worstOptimal.scenario} ${fixed(worstOptimal.relative_to_optimal_complete)}× | ${yes(worstOptimal.relative_to_optimal_complete <= 1.3)} |`,
    `| never worse than freecdn | ${freecdn.size === 0 ? 'freecdn did not run' : `worse in ${beaten.length} of ${n}${beaten.length > 0 ? `: ${beaten.map((row) => `${row.scenario} ${fixed(row.mean_ms / freecdn.get(row.scenario)!.mean_ms)}×`).join(', ')}` : ''}`} | ${yes(freecdn.size > 0 && beaten.length === 0)} |`,
    `| 0 failed requests | ${failed.length === 0 ? '0 in every scenario' : failed.map((row) => `${row.scenario} ${row.failed_requests}`).join(', ')} | ${yes(failed.length === 0)} |`,
  ];
}

/** Per scenario: the best direct single replica, and webpp, freecdn and the through-worker webpp-paper against it. */
export function regretCellsMarkdown(rows: readonly ResultRow[]): string[] {
  const scenarios = [...new Set(rows.map((row) => row.scenario))].filter((scenario) => rows.some((row) => row.scenario === scenario && row.policy.startsWith(DIRECT_PREFIX)));
  if (scenarios.length === 0) return ['(results.json has no `direct-<server>` rows yet)'];
  const policies = ['webpp', 'freecdn', 'webpp-paper', 'optimal-complete'];
  const find = (scenario: string, policy: string): ResultRow | undefined => rows.find((row) => row.scenario === scenario && row.policy === policy);
  const out = [
    'Each cell: mean ÷ the best single replica fetched directly by the page / mean ÷ optimal-complete / failed requests.',
    '',
    `| scenario | best single (mean) | ${policies.join(' | ')} |`,
    `|---|---|${policies.map(() => '---').join('|')}|`,
  ];
  for (const scenario of scenarios) {
    const any = rows.find((row) => row.scenario === scenario)!;
    const best = any.best_single ? find(scenario, any.best_single) : undefined;
    const cells = policies.map((policy) => {
      const row = find(scenario, policy);
      return row ? `${fixed(row.relative_to_best_single)} / ${fixed(row.relative_to_optimal_complete)} / ${row.failed_requests}` : '–';
    });
    out.push(`| ${scenario} | ${any.best_single ?? '–'} (${fixed(best?.mean_ms, 0)} ms) | ${cells.join(' | ')} |`);
  }
  return out;
}

/** The generated worlds: how they were run, the goals, and the held-out and training summaries. */
export function generatedSummaryMarkdown(document: GeneratedDocument | undefined): string[] {
  if (!document) return ['(docs/benchmarks/evaluation-generated.json is not there yet: `npm run bench evaluation-generated`)'];
  const { info, summary } = document;
  const worlds = new Set(document.rows.map((row) => row.seed));
  const heldOut = new Set(document.rows.filter((row) => row.held_out).map((row) => row.seed));
  const table = (label: string, set: GeneratedSummary['held_out']): string[] => [
    `| ${label} | worlds | ÷ best single: median / p90 / worst | ÷ optimal-complete: median / worst | page ÷ best single (median) | ≤ freecdn | extra requests / bytes (mean) | failed |`,
    '|---|---|---|---|---|---|---|---|',
    ...Object.entries(set).map(
      ([policy, s]) =>
        `| ${policy} | ${s.seeds} | ${fixed(s.relative_to_best_single.median)} / ${fixed(s.relative_to_best_single.p90)} / ${fixed(s.relative_to_best_single.worst)} | ` +
        `${fixed(s.relative_to_optimal_complete.median)} / ${fixed(s.relative_to_optimal_complete.worst)} | ${fixed(s.page_relative_to_best_single?.median)} | ` +
        `${s.share_no_worse_than_freecdn === null ? '–' : `${fixed(s.share_no_worse_than_freecdn * 100, 0)} %`} | ${fixed(s.extra_requests_pct.mean, 1)} % / ${fixed(s.extra_bytes_pct.mean, 1)} % | ${s.failed_requests} |`,
    ),
  ];
  return [
    `${worlds.size} generated worlds (${heldOut.size} held out) in Chromium, ${info.runs} run${info.runs === 1 ? '' : 's'} (\`${info.command}\`, code ${info.engine}, Chromium ${info.chromium}, ${Math.round(info.wallSeconds / 60)} min), ` +
      'from [docs/benchmarks/evaluation-generated.json](docs/benchmarks/evaluation-generated.json)' +
      `${info.skipped && info.skipped.length > 0 ? `; left out after a harness failure: ${info.skipped.map((skip) => `world ${skip.seed} in run ${skip.run} (${skip.error})`).join(', ')}` : ''}` +
      `${info.rerun && info.rerun.length > 0 ? `; measured apart after a harness failure in the run: ${info.rerun.map((rerun) => `world ${rerun.seed} (\`${rerun.command}\`, code ${rerun.engine})`).join(', ')}` : ''}:`,
    '',
    ...goalsTable(document.goals),
    '',
    ...table('held-out worlds', summary.held_out),
    '',
    ...table('training worlds', summary.training),
  ];
}

/** One line per world (medians over the runs). */
export function generatedWorldsMarkdown(document: GeneratedDocument | undefined): string[] {
  return document ? worldsTable(document.rows) : ['(not run yet)'];
}
