/**
 * The driver's preferred server (PlanInput.prefer; issue 26): the worker names the page's own
 * origin, which navigation preload and the browser's own fetch reach at no cost to the page.
 * The policy puts it first only where it cannot tell it from the best, by its own measure:
 *
 * - it is a member of the equivalent-server set (equivalent-set.ts: Fei's thresholds, the
 *   policy's tolerance of "as good as the best"; any member is a first attempt the policy
 *   itself draws), or
 * - its expected time is within the uncertainty of the two estimates: the difference to the
 *   best is at most one standard error of the difference,
 *
 *       E_pref − E_best ≤ √(SE_pref² + SE_best²),   SE = σ_ttfb / √n
 *
 *   with σ the standard deviation of the server's first bytes (its time-decayed sketch) and n
 *   their time-decayed count (latency-sketch.ts `weight`): the standard error of a mean. A
 *   difference that one standard error covers is noise the policy's own samples cannot
 *   resolve; a real difference shows as more samples come (n grows, SE shrinks).
 *
 * and the set is not spilling load to other servers (load-spread.ts: the servers said they
 * are busy; the spread then decides). Undefined otherwise: the plan is the policy's own.
 */
import type { ServerId } from '../../types.js';
import type { WeightedSamples } from './latency-sketch.js';
import type { Spread, SpreadState } from './load-spread.js';

/** What the ranking (plan.ts) knows of one measured server. */
export interface RankedServer {
  server: ServerId;
  ttfb: WeightedSamples;
  /** The time-decayed count of its first-byte samples. */
  sampleWeight: number;
  /** Its expected time as the plan ranks it (aged, pushed, queued; hedged when a hedge pays). */
  effectiveMs: number;
}

/** σ / √n of a server's mean first byte (ms); Infinity without samples. */
function standardErrorMs(server: RankedServer): number {
  const { valuesMs, weights } = server.ttfb;
  if (!(server.sampleWeight > 0)) return Infinity;
  let mean = 0;
  valuesMs.forEach((value, i) => (mean += value * (weights[i] as number)));
  let variance = 0;
  valuesMs.forEach((value, i) => (variance += (weights[i] as number) * (value - mean) ** 2));
  return Math.sqrt(variance / server.sampleWeight);
}

export function preferredFirst(
  prefer: ServerId | undefined,
  ranked: readonly RankedServer[],
  memberServers: ReadonlySet<ServerId>,
  spread: readonly Spread[],
  state: SpreadState,
): ServerId | undefined {
  if (prefer === undefined || state.spill.loaded) return undefined;
  const preferred = ranked.find((entry) => entry.server === prefer);
  const best = ranked[0];
  if (preferred === undefined || best === undefined) return undefined;
  if (memberServers.has(prefer)) return (spread.find((entry) => entry.server === prefer)?.weight ?? 0) > 0 ? prefer : undefined;
  return preferred.effectiveMs - best.effectiveMs <= Math.hypot(standardErrorMs(preferred), standardErrorMs(best)) ? prefer : undefined;
}
