/**
 * Load spread (issue 13, "against herding"): how the first attempt of a request is drawn
 * from the equivalent-server set and, when the servers say they are queueing, beyond it.
 *
 * The set alone (equivalent-set.ts, Fei's thresholds on the client's estimates) keeps a
 * single client on the fastest servers. But with many clients its membership flips for all
 * of them at once: they read the same pushed S, so a loaded best server leaves every set
 * together and the herd moves on (docs/evaluation.md, "Herding"). The servers' pushed
 * queueing share q = 1 − S_idle / S (pushed-load.ts; ρ for an M/M/1 server) is a smooth
 * signal of load that the client can act on by degrees rather than by a threshold:
 *
 *   member m:      w_m = (E_best / E_m)^k · (1 − q_m)
 *   other server j: w_j = q_set · (E_best / E_j)^k_spread · (1 − q_j),
 *                   q_set = loadSpreadShare · mean of q over the members
 *
 * and one server is drawn with probability w / Σw. Idle servers (q = 0): the set as before,
 * so one client keeps its single-client quality. Queueing members pass a share of their
 * requests on, in proportion to how much of their time is queue, to the other servers
 * leaning to the nearer ones (k_spread) and away from those that queue themselves. Smooth
 * in the load, so the clients together move by degrees (the stability argument of Fischer
 * and Vöcking, "Adaptive routing with stale information", TCS 410(36), 2009: reactions
 * proportional to the gain, not all-or-nothing, do not oscillate on stale values; and
 * Mitzenmacher, "How useful is old information?", IEEE TPDS 11(1), 2000: picking the single
 * best by stale load is what herds).
 */
import type { ServerId } from '../../types.js';
import type { Estimated } from './equivalent-set.js';
import type { HerdOptions } from './herd-options.js';

export interface Spread {
  server: ServerId;
  weight: number;
}

/** Weights of the first attempt over `ranked` (the measured, available candidates). */
export function spreadWeights(
  ranked: readonly Estimated[],
  members: readonly Estimated[],
  queueingShare: (server: ServerId) => number,
  options: HerdOptions,
): Spread[] {
  if (ranked.length === 0) return [];
  const bestMs = Math.max(Number.MIN_VALUE, Math.min(...ranked.map((entry) => entry.expectedMs)));
  const lean = (entry: Estimated, exponent: number): number => (exponent === 0 ? 1 : (bestMs / Math.max(bestMs, entry.expectedMs)) ** exponent);
  const memberSet = new Set(members.map((member) => member.server));
  const share = (server: ServerId): number => Math.min(1, Math.max(0, options.loadSpreadShare * queueingShare(server)));
  const setShare = members.length === 0 ? 0 : members.reduce((sum, member) => sum + share(member.server), 0) / members.length;
  return ranked.map((entry) => {
    const free = 1 - share(entry.server);
    const weight = memberSet.has(entry.server)
      ? lean(entry, options.equivalentSetWeightExponent) * free
      : setShare * lean(entry, options.loadSpreadExponent) * free;
    return { server: entry.server, weight };
  });
}

/** One server drawn with probability weight / Σ weight; `fallback` when no weight is positive. `random` in [0, 1). */
export function drawWeighted(spread: readonly Spread[], random: () => number, fallback: ServerId | undefined): ServerId | undefined {
  const total = spread.reduce((sum, entry) => sum + Math.max(0, entry.weight), 0);
  if (!(total > 0)) return fallback;
  let draw = random() * total;
  for (const entry of spread) {
    draw -= Math.max(0, entry.weight);
    if (draw < 0) return entry.server;
  }
  return fallback;
}
