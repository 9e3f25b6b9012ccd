/**
 * The goals of issue 11, checked against the rows (reported, never asserted in a test):
 *
 * | goal | target |
 * | mean, every scenario | ≤ 1.10 × optimal-complete's mean |
 * | p95, every scenario | ≤ 1.3 × optimal-complete's p95 |
 * | extra requests | ≤ 5%: hedges, refreshes, probes and resumes, all counted |
 * | failed requests | 0 |
 * | peak vs the mean single server | at least 45% better |
 * | agreement with the simulator | within ±10% on at least 90% of rows (baselines left out) |
 *
 * With several runs a goal counts as met only when every run met it (the range's worst end).
 */
import { BASELINE_POLICIES } from './agreement.js';
import type { ResultRow } from './rows.js';

export const GOALS = {
  meanRatio: 1.1,
  p95Ratio: 1.3,
  extraRequestsPct: 5,
  failedRequests: 0,
  peakGainOverMeanSingle: 0.45,
  agreementRelative: 0.1,
  agreementShare: 0.9,
} as const;

/** The policies the goals are reported for, the new default first (those present in the rows). */
const GOAL_POLICIES = ['webpp', 'webpp-fast', 'webpp-paper', 'hedged'] as const;

/** The worst end of a figure over the runs (the value itself for one run). */
const worst = (row: ResultRow, field: 'relative_to_optimal' | 'relative_p95_to_optimal' | 'extra_requests_pct' | 'failed_requests'): number => row.range?.[field]?.[1] ?? row[field];
const lowest = (row: ResultRow, field: 'better_than_mean_single'): number => row.range?.[field]?.[0] ?? row[field];
const fmt = (value: number, digits = 3): string => (Number.isFinite(value) ? value.toFixed(digits) : 'n/a');
const withRange = (row: ResultRow, field: keyof NonNullable<ResultRow['range']>, digits = 3): string => {
  const range = row.range?.[field];
  const value = row[field] as number;
  return range && row.runs > 1 ? `${fmt(value, digits)} (${fmt(range[0], digits)}–${fmt(range[1], digits)})` : fmt(value, digits);
};

export interface GoalCell {
  met: boolean;
  text: string;
}

/** Rows that count toward the agreement goal: every policy but the two optimal baselines. */
export function agreementRows(rows: readonly ResultRow[]): ResultRow[] {
  return rows.filter((row) => !BASELINE_POLICIES.includes(row.policy));
}

/** |browser − simulator| ≤ 10% of the simulator's value (the issue's definition). */
export const withinTenPercent = (row: ResultRow): boolean =>
  Math.abs(row.relative_to_optimal - row.sim_relative_to_optimal) <= GOALS.agreementRelative * row.sim_relative_to_optimal + 1e-9;

/** One cell per goal for `policy`; undefined when the policy did not run. */
export function goalCells(rows: readonly ResultRow[], policy: string): Record<string, GoalCell> | undefined {
  const mine = rows.filter((row) => row.policy === policy);
  if (mine.length === 0) return undefined;
  const worstOf = (field: 'relative_to_optimal' | 'relative_p95_to_optimal' | 'extra_requests_pct') => [...mine].sort((a, b) => worst(b, field) - worst(a, field))[0]!;
  const mean = worstOf('relative_to_optimal');
  const p95 = worstOf('relative_p95_to_optimal');
  const extra = worstOf('extra_requests_pct');
  const failedRows = mine.filter((row) => worst(row, 'failed_requests') > 0);
  const cells: Record<string, GoalCell> = {
    mean: {
      met: worst(mean, 'relative_to_optimal') <= GOALS.meanRatio,
      text: `worst ${mean.scenario} ${withRange(mean, 'relative_to_optimal')}`,
    },
    p95: {
      met: worst(p95, 'relative_p95_to_optimal') <= GOALS.p95Ratio,
      text: `worst ${p95.scenario} ${withRange(p95, 'relative_p95_to_optimal')}`,
    },
    extra: {
      met: worst(extra, 'extra_requests_pct') <= GOALS.extraRequestsPct,
      text: `worst ${extra.scenario} ${withRange(extra, 'extra_requests_pct', 2)}%`,
    },
    failed: {
      met: failedRows.length === 0,
      text: failedRows.length === 0 ? '0 everywhere' : failedRows.map((row) => `${row.scenario} ${withRange(row, 'failed_requests', 0)}`).join(', '),
    },
  };
  const peak = mine.find((row) => row.scenario === 'peak');
  if (peak) {
    cells['peak'] = { met: lowest(peak, 'better_than_mean_single') >= GOALS.peakGainOverMeanSingle, text: `${withRange(peak, 'better_than_mean_single')} better` };
  }
  return cells;
}

const GOAL_NAMES: Record<string, string> = {
  mean: `mean ≤ ${GOALS.meanRatio.toFixed(2)}× optimal-complete, every scenario`,
  p95: `p95 ≤ ${GOALS.p95Ratio}× optimal-complete's p95, every scenario`,
  extra: `extra requests ≤ ${GOALS.extraRequestsPct}% (hedges, refreshes, probes, resumes)`,
  failed: 'failed requests: 0',
  peak: `peak: ≥ ${GOALS.peakGainOverMeanSingle * 100}% better than the mean single server`,
};

/** The goals table (markdown), one column per goal policy present. */
export function goalsMarkdown(rows: readonly ResultRow[]): string[] {
  const policies = GOAL_POLICIES.filter((policy) => rows.some((row) => row.policy === policy));
  const cells = Object.fromEntries(policies.map((policy) => [policy, goalCells(rows, policy)!]));
  const out: string[] = [];
  out.push(`| goal | ${policies.join(' | ')} |`);
  out.push(`| --- | ${policies.map(() => '---').join(' | ')} |`);
  for (const [goal, name] of Object.entries(GOAL_NAMES)) {
    if (!policies.some((policy) => cells[policy]![goal])) continue;
    const row = policies.map((policy) => {
      const cell = cells[policy]![goal];
      return cell ? `${cell.met ? 'met' : '**missed**'}: ${cell.text}` : '–';
    });
    out.push(`| ${name} | ${row.join(' | ')} |`);
  }
  const compared = agreementRows(rows);
  const agreeing = compared.filter(withinTenPercent).length;
  const share = compared.length === 0 ? 0 : agreeing / compared.length;
  out.push('');
  out.push(
    `Agreement with the simulator (all policies, the two optimal baselines left out): ${agreeing} of ${compared.length} rows within ±10% ` +
      `(${fmt(share * 100, 1)}%; goal ≥ ${GOALS.agreementShare * 100}%: ${share >= GOALS.agreementShare ? 'met' : '**missed**'}); ` +
      `${compared.filter((row) => row.agrees_relative_to_optimal).length} of ${compared.length} within each scenario's own tolerance (agreement.ts).`,
  );
  return out;
}

/** Console lines: one per goal policy. */
export function goalLines(rows: readonly ResultRow[]): string[] {
  return GOAL_POLICIES.flatMap((policy) => {
    const cells = goalCells(rows, policy);
    if (!cells) return [];
    return [`- ${policy}: ${Object.entries(cells).map(([goal, cell]) => `${goal} ${cell.met ? 'met' : 'MISSED'} (${cell.text})`).join('; ')}`];
  });
}
