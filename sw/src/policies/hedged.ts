/**
 * "Hedged": the extended Refresh algorithm (paper Section 4.1, Figure 4) plus a hedged
 * request: if the best replica has sent no response head by its p95 latency, the request
 * also goes to the second best, and the first head wins.
 *
 * The p95 comes from a second LatencyTable with a long memory (r = 0.05 in eq. (2), (3)),
 * fed with every sample the worker records (ReplicaPolicy.observeSample): with the
 * selection's r = 0.95, eq. (3)'s variance is almost only the newest deviation, too jumpy
 * to place a hedge. The hedge is the plain percentile (no floor, no multiple of the mean),
 * and only placed when it comes before the best replica's own timeout. This is the same
 * rule as the simulator's `hedged` policy (packages/simulator/src/policies/webpp.ts).
 */
import { LatencyTable, rankReplicas, resolveSelectionConfig } from '@webpp/core';
import type { RandomSource, SelectionConfig } from '@webpp/core';
import { extendedRefreshPolicy } from '../policy.js';
import type { ReplicaPolicy } from '../policy.js';

export interface HedgeOptions {
  /** Hedge after this percentile of the best replica's latency. Default 95. */
  percentile?: number;
  /** r of the hedge's own latency estimate. Default 0.05. */
  ewmaWeight?: number;
}

export function hedgedPolicy(config: SelectionConfig, random: RandomSource, options: HedgeOptions = {}): ReplicaPolicy {
  const percentile = options.percentile ?? 95;
  const ewmaWeight = options.ewmaWeight ?? 0.05;
  if (!(percentile > 0 && percentile < 100)) throw new RangeError(`percentile must be in (0, 100) (got ${percentile})`);
  // The pure percentile: a floor of 1 ms and no multiple of the mean.
  const hedgeConfig = resolveSelectionConfig({ ewmaWeight, timeoutPercentile: percentile, timeoutFloorMs: 1, timeoutMeanMultiple: 0 }, config);
  const estimates = new LatencyTable(hedgeConfig);
  const refresh = extendedRefreshPolicy();
  return {
    name: 'hedged',
    plan: ({ candidates, table }) => {
      const ranked = rankReplicas(candidates, table, random);
      const best = ranked[0];
      const second = ranked[1];
      if (!best || !second) return ranked;
      const hedgeAfterMs = estimates.timeoutMs(best.server);
      if (!(hedgeAfterMs < best.timeoutMs)) return ranked;
      return ranked.map((attempt, index) => (index === 1 ? { ...attempt, hedgeAfterMs, reason: `${attempt.reason}; hedge at p${percentile}` } : attempt));
    },
    maintenance: refresh.maintenance!.bind(refresh),
    observeSample: (server, ttfbMs) => {
      if (Number.isFinite(ttfbMs) && ttfbMs >= 0) estimates.recordSample(server, ttfbMs);
    },
  };
}
