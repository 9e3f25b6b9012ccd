/**
 * Regret against the best single replica in hindsight (issue 22, "no regret"): among the
 * `direct-<server>` policies of one scenario and run (each replica fetched directly by the
 * page, no worker), of those with the fewest failed requests the one with the lowest mean (a
 * replica that lost requests in an outage is not "best" for its survivors' mean; the same
 * rule as the simulator's, @webpp/simulator generalization.ts). Every other policy's mean is
 * divided by that one's.
 */
import { DIRECT_PREFIX } from './policies.js';

export interface RegretInput {
  scenario: string;
  policy: string;
  mean_ms: number;
  failed_requests: number;
}

/** The best direct single replica of one scenario's rows, or undefined when none ran. */
export function bestSingle<T extends RegretInput>(rows: readonly T[]): T | undefined {
  const singles = rows.filter((row) => row.policy.startsWith(DIRECT_PREFIX) && Number.isFinite(row.mean_ms));
  const fewestFailed = Math.min(...singles.map((row) => row.failed_requests));
  const candidates = singles.filter((row) => row.failed_requests === fewestFailed);
  return candidates.reduce<T | undefined>((best, row) => (best === undefined || row.mean_ms < best.mean_ms ? row : best), undefined);
}

/** The rows of one run with `relative_to_best_single` (mean ÷ the best single's mean) and `best_single` (its policy name). */
export function withRegret<T extends RegretInput>(rows: readonly T[]): (T & { relative_to_best_single: number; best_single: string | null })[] {
  const best = new Map<string, T | undefined>();
  for (const scenario of new Set(rows.map((row) => row.scenario))) best.set(scenario, bestSingle(rows.filter((row) => row.scenario === scenario)));
  return rows.map((row) => {
    const single = best.get(row.scenario);
    return {
      ...row,
      relative_to_best_single: single ? Math.round((row.mean_ms / single.mean_ms) * 1000) / 1000 : Number.NaN,
      best_single: single ? single.policy : null,
    };
  });
}
