/**
 * The rows of docs/benchmarks/results.json: one per scenario and policy, from what the
 * browser measured and what the simulator computed beside it.
 *
 * Every ratio is against `optimal-complete` (every replica at once, the first complete body
 * wins: the paper's optimal, Section 6.1). The worker's `optimal` (the first response head
 * wins) is the weaker baseline; ratios against it are kept as `relative_to_worker_optimal`.
 */
import type { ResultRowCore } from '@webpp/simulator';
import { RATIO_BASELINE, type Agreement, type ScenarioTolerance, type SimulatedPolicy } from './agreement.js';
import type { PolicyMeasurement } from './metrics.js';
import { round } from './metrics.js';
import { withRegret } from './regret.js';

/** One row of results.json: the fields shared with the simulator's rows (@webpp/simulator ResultRowCore), then the browser's own. */
export interface ResultRow extends ResultRowCore {
  /** p95 ÷ optimal-complete's p95. */
  relative_p95_to_optimal: number;
  source: 'browser';
  /** The same as relative_to_optimal (kept for readers of the issue-7 files, where it was an extra column). */
  relative_to_optimal_complete: number;
  /** mean ÷ the worker-`optimal` mean (first response head wins): issue 7's baseline. */
  relative_to_worker_optimal: number;
  extra_requests_pct_server: number;
  /** Attempts beyond the first of each request (failovers and hedges), refreshes, probes, body resumes. */
  extra_attempts: number;
  refreshes: number;
  probes: number;
  resumes: number;
  /** Page requests with no decision event from the worker: must be 0, or the extra-request counts are partial (the run fails). */
  missing_decisions: number;
  served_by: Record<string, number>;
  attempt_outcomes: Record<string, number>;
  failed_attempts_by_server: Record<string, number>;
  ttfb_beyond_link_ms: PolicyMeasurement['ttfbBeyondLinkMs'];
  best_server_share: number | null;
  failure_reasons: Record<string, number>;
  by_size: PolicyMeasurement['bySize'];
  time_scale: number;
  sim_mean_ms: number;
  sim_relative_to_optimal: number;
  sim_relative_to_optimal_range: [number, number];
  sim_relative_p95_to_optimal: number;
  sim_extra_requests_pct: number;
  sim_failed_requests: number;
  sim_best_server_share: number;
  /** The ratio tolerance this row was judged with (agreement.ts), and the scenario's spread of policies it derives from. */
  agreement_tolerance: number;
  scenario_spread: number;
  agrees_relative_to_optimal: boolean;
  within_sim_seed_range: boolean;
  agrees_extra_requests: boolean;
  agrees_failed_requests: boolean;
  /** mean ÷ the best `direct-<server>` mean of the same scenario and run (regret.ts; issue 22); NaN when none ran. */
  relative_to_best_single: number;
  /** That best direct single replica's policy name, or null. */
  best_single: string | null;
  /** 1 − mean ÷ the mean of the scenario's single servers' means, within the row's own run (paper Section 6.2). */
  better_than_mean_single: number;
  /** Bench runs this row is the median of (1 for a single run). */
  runs: number;
  /** With several runs: [min, max] over the runs of each figure; the row's own value is the median. */
  range?: Partial<Record<RangedField, [number, number]>>;
}

/** The figures that get a median and a range over runs. */
export const RANGED_FIELDS = [
  'mean_ms',
  'median_ms',
  'p95_ms',
  'relative_to_optimal',
  'relative_p95_to_optimal',
  'relative_median_to_optimal',
  'relative_to_optimal_complete',
  'relative_to_worker_optimal',
  'extra_requests_pct',
  'extra_requests_pct_server',
  'failed_requests',
  'requests',
  'extra_attempts',
  'refreshes',
  'probes',
  'resumes',
  'missing_decisions',
  'best_server_share',
  'sim_mean_ms',
  'sim_relative_to_optimal',
  'sim_relative_p95_to_optimal',
  'sim_extra_requests_pct',
  'sim_failed_requests',
  'better_than_mean_single',
  'relative_to_best_single',
] as const;
type RangedField = (typeof RANGED_FIELDS)[number];

export function resultRows(
  measurements: readonly PolicyMeasurement[],
  simulated: readonly SimulatedPolicy[],
  agreements: ReadonlyMap<string, Agreement>,
  tolerance: ScenarioTolerance,
  timeScale: number,
): ResultRow[] {
  const workerOptimal = measurements.find((m) => m.policy === 'optimal');
  const complete = measurements.find((m) => m.policy === RATIO_BASELINE);
  const ratio = (value: number, base: number | undefined): number => (base === undefined ? Number.NaN : round(value / base, 3));
  return measurements.map((m) => {
    const sim = simulated.find((s) => s.policy === m.policy)!;
    const agree = agreements.get(m.policy)!;
    return {
      scenario: m.scenario,
      policy: m.policy,
      mean_ms: round(m.meanMs),
      median_ms: round(m.medianMs),
      p95_ms: round(m.p95Ms),
      relative_to_optimal: ratio(m.meanMs, complete?.meanMs),
      relative_p95_to_optimal: ratio(m.p95Ms, complete?.p95Ms),
      extra_requests_pct: round(m.extraRequestsPct, 2),
      failed_requests: m.failed,
      source: 'browser',
      requests: m.requests,
      relative_median_to_optimal: ratio(m.medianMs, complete?.medianMs),
      relative_to_optimal_complete: ratio(m.meanMs, complete?.meanMs),
      relative_to_worker_optimal: ratio(m.meanMs, workerOptimal?.meanMs),
      extra_requests_pct_server: round(m.extraRequestsPctServer, 2),
      extra_attempts: m.extraAttempts,
      refreshes: m.refreshes,
      probes: m.probes,
      resumes: m.resumes,
      missing_decisions: m.missingDecisions,
      served_by: m.servedBy,
      attempt_outcomes: m.attemptOutcomes,
      failed_attempts_by_server: m.failedAttemptsByServer,
      ttfb_beyond_link_ms: m.ttfbBeyondLinkMs,
      best_server_share: m.bestServerShare === null ? null : round(m.bestServerShare, 3),
      failure_reasons: m.failureReasons,
      by_size: m.bySize,
      time_scale: timeScale,
      sim_mean_ms: round(sim.meanMs),
      sim_relative_to_optimal: round(sim.relativeToOptimal, 3),
      sim_relative_to_optimal_range: [round(sim.relativeMin, 3), round(sim.relativeMax, 3)],
      sim_relative_p95_to_optimal: round(sim.relativeP95ToOptimal, 3),
      sim_extra_requests_pct: round(sim.extraRequestsPct, 2),
      sim_failed_requests: round(sim.failedRequests, 1),
      sim_best_server_share: round(sim.bestServerShare, 3),
      agreement_tolerance: round(agree.ratioToleranceAbs, 3),
      scenario_spread: round(tolerance.spread, 3),
      agrees_relative_to_optimal: agree.ratio,
      within_sim_seed_range: agree.ratioWithinSeedRange,
      agrees_extra_requests: agree.extra,
      agrees_failed_requests: agree.failed,
      better_than_mean_single: Number.NaN,
      relative_to_best_single: Number.NaN,
      best_single: null,
      runs: 1,
    };
  });
}

/** Fills in better_than_mean_single and the regret against the best direct single replica for the rows of one run. */
export function withGains(rows: readonly ResultRow[]): ResultRow[] {
  return withRegret(rows).map((row) => ({ ...row, better_than_mean_single: round(improvementOverSingles(rows, row.scenario, row.policy), 3) }));
}

/** 1 − policy mean ÷ mean of the single servers' means (paper Section 6.2's "improvement"). */
function improvementOverSingles(rows: readonly ResultRow[], scenario: string, policy: string): number {
  const singles = rows.filter((row) => row.scenario === scenario && row.policy.startsWith('single-'));
  const target = rows.find((row) => row.scenario === scenario && row.policy === policy);
  if (!target || singles.length === 0) return Number.NaN;
  const meanSingle = singles.reduce((sum, row) => sum + row.mean_ms, 0) / singles.length;
  return 1 - target.mean_ms / meanSingle;
}
