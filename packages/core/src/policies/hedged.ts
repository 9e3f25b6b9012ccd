/**
 * "Hedged": the extended Refresh algorithm (paper Section 4.1, Figure 4) plus a hedged
 * request ("The Tail at Scale", Dean and Barroso 2013): if the best replica has sent no
 * response head by its p95 latency, the request also goes to the second best, and the first
 * head wins.
 *
 * The p95 comes from a second LatencyTable with a long memory (r = 0.05 in eq. (2), (3)):
 * with the selection's r = 0.95, eq. (3)'s variance is almost only the newest deviation,
 * too jumpy to place a hedge. The hedge is the plain percentile (no floor, no multiple of
 * the mean), placed only when it comes before the best replica's own timeout.
 */
import { LatencyTable } from '../latency-table.js';
import { resolveSelectionConfig } from '../config.js';
import type { SelectionConfig } from '../types.js';
import type { PolicyDeps } from '../engine/policy-types.js';
import { extendedRefreshPolicy } from './extended-refresh.js';
import type { TablePolicy } from './table-policy.js';

export interface HedgeOptions {
  /** Hedge after this percentile of the best replica's latency. Default 95. */
  percentile?: number;
  /** r of the hedge's own latency estimate. Default 0.05. */
  ewmaWeight?: number;
}

export function hedgedPolicy(deps: PolicyDeps, config: Required<SelectionConfig>, options: HedgeOptions = {}): TablePolicy {
  const percentile = options.percentile ?? 95;
  const ewmaWeight = options.ewmaWeight ?? 0.05;
  if (!(percentile > 0 && percentile < 100)) throw new RangeError(`percentile must be in (0, 100) (got ${percentile})`);
  // The pure percentile: a floor of 1 ms and no multiple of the mean.
  const hedgeConfig = resolveSelectionConfig({ ewmaWeight, timeoutPercentile: percentile, timeoutFloorMs: 1, timeoutMeanMultiple: 0 }, config);
  const estimates = new LatencyTable(hedgeConfig, deps.now);
  const refresh = extendedRefreshPolicy(deps, 'hedged', config);
  return {
    ...refresh,
    plan: (input) => {
      const ranked = refresh.plan(input);
      const best = ranked[0];
      if (!best || ranked.length < 2) return ranked;
      const hedgeAfterMs = estimates.timeoutMs(best.server);
      if (!(hedgeAfterMs < best.timeoutMs)) return ranked;
      return ranked.map((attempt, index) => (index === 1 ? { ...attempt, hedgeAfterMs, reason: `${attempt.reason}; hedge at p${percentile}` } : attempt));
    },
    observe: (sample) => {
      refresh.observe(sample);
      const { ttfbMs } = sample;
      if ((sample.outcome === 'served' || sample.outcome === 'stale') && ttfbMs !== undefined && Number.isFinite(ttfbMs) && ttfbMs >= 0) {
        estimates.recordSample(sample.server, ttfbMs);
      }
    },
  };
}
