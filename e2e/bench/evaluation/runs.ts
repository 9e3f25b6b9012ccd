/**
 * Several runs of the evaluation folded into one table: each figure is the median over the
 * runs, with its range (min–max) beside it, because this shared machine is noisy (issue 11:
 * "run the bench three times and report the median and the range of each figure").
 */
import { agreement, scenarioTolerance } from './agreement.js';
import { RANGED_FIELDS, type ResultRow } from './rows.js';

/** The median of a non-empty list (the mean of the middle two for an even count). */
export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

const round3 = (value: number): number => Math.round(value * 1000) / 1000;

/**
 * One row per (scenario, policy): the median of every ranged figure over the runs, its range,
 * and the agreement judged again on the medians (each scenario's tolerance from the median
 * simulated ratios). Lists and breakdowns (served_by, by_size…) come from the run whose
 * relative_to_optimal is the median one.
 */
export function aggregateRuns(runs: readonly (readonly ResultRow[])[]): ResultRow[] {
  if (runs.length === 1) return runs[0]!.map((row) => ({ ...row }));
  const medians = medianRows(runs);
  for (const scenario of new Set(medians.map((row) => row.scenario))) {
    const mine = medians.filter((row) => row.scenario === scenario);
    const tolerance = scenarioTolerance(
      mine.map((row) => ({ policy: row.policy, relativeToOptimal: row.sim_relative_to_optimal, relativeMin: row.sim_relative_to_optimal_range[0], relativeMax: row.sim_relative_to_optimal_range[1] })),
    );
    for (const row of mine) {
      const agree = agreement(
        { relativeToOptimal: row.relative_to_optimal, extraRequestsPct: row.extra_requests_pct, failed: row.failed_requests },
        {
          relativeToOptimal: row.sim_relative_to_optimal,
          relativeMin: row.sim_relative_to_optimal_range[0],
          relativeMax: row.sim_relative_to_optimal_range[1],
          extraRequestsPct: row.sim_extra_requests_pct,
          failedRequests: row.sim_failed_requests,
        },
        tolerance,
      );
      row.agreement_tolerance = round3(agree.ratioToleranceAbs);
      row.scenario_spread = round3(tolerance.spread);
      row.agrees_relative_to_optimal = agree.ratio;
      row.within_sim_seed_range = agree.ratioWithinSeedRange;
      row.agrees_extra_requests = agree.extra;
      row.agrees_failed_requests = agree.failed;
    }
  }
  return medians;
}

function medianRows(runs: readonly (readonly ResultRow[])[]): ResultRow[] {
  const keys = [...new Set(runs.flatMap((rows) => rows.map((row) => `${row.scenario}\u0000${row.policy}`)))];
  return keys.map((key) => {
    const [scenario, policy] = key.split('\u0000') as [string, string];
    const rows = runs.map((run) => run.find((row) => row.scenario === scenario && row.policy === policy)).filter((row): row is ResultRow => row !== undefined);
    const byRatio = [...rows].sort((a, b) => a.relative_to_optimal - b.relative_to_optimal);
    const base: ResultRow = { ...byRatio[Math.floor((byRatio.length - 1) / 2)]!, runs: rows.length, range: {} };
    for (const field of RANGED_FIELDS) {
      const values = rows.map((row) => row[field]).filter((value): value is number => typeof value === 'number' && Number.isFinite(value));
      if (values.length === 0) continue;
      (base as unknown as Record<string, number>)[field] = round3(median(values));
      base.range![field] = [Math.min(...values), Math.max(...values)];
    }
    base.sim_relative_to_optimal_range = [median(rows.map((row) => row.sim_relative_to_optimal_range[0])), median(rows.map((row) => row.sim_relative_to_optimal_range[1]))];
    return base;
  });
}
