/**
 * Load spread (issue 13, "against herding"): how the first attempt of a request is drawn
 * from the equivalent-server set and, when the servers say they are busy, beyond it.
 *
 * The set alone (equivalent-set.ts, Fei's thresholds on the client's estimates) keeps a
 * single client on the fastest servers. But with many clients its membership flips for all
 * of them at once: they read the same pushed S, so a loaded best server leaves every set
 * together and the herd moves on (docs/evaluation.md, "Herding"). The servers' pushed
 * utilisation u (Server-Timing `util`, pushed-load.ts) is a smooth signal of load that the
 * client acts on by degrees rather than by a threshold:
 *
 *   queued(u) = u' / (1 − u'),  u' = max(0, u − floor) / (1 − floor)
 *                 (mean requests in an M/M/1 server at u'; Kleinrock 1975, eq. 3.24)
 *   member m:        w_m = (E_best / E_m)^k · 1 / (1 + queued(u_m))
 *   other server j:  w_j = spill · (E_best / E_j)^k_spread · 1 / (1 + queued(u_j))
 *   spill = min(1, loadSpreadShare · mean of queued(u) over the members), released slowly
 *
 * and one server is drawn with probability w / Σw. Servers busy below the floor: the set as
 * before, so one client keeps its single-client quality. Busy members pass requests on to
 * the other servers, leaning to the nearer ones (k_spread) and away from those that are busy
 * themselves. Smooth in the load, with a bounded rate of moves (keepDrawn) and a slow
 * release (SpillMemory), so the clients together move by degrees: Fischer and Vöcking,
 * "Adaptive routing with stale information", TCS 410(36), 2009 (migration at a bounded rate
 * converges on stale values where best response oscillates); Mitzenmacher, "How useful is
 * old information?", IEEE TPDS 11(1), 2000 (picking the single best by stale load herds).
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
  busyShare: (server: ServerId) => number,
  options: HerdOptions,
  memory: SpillMemory,
  nowMs: number,
): Spread[] {
  if (ranked.length === 0) return [];
  const bestMs = Math.max(Number.MIN_VALUE, Math.min(...ranked.map((entry) => entry.expectedMs)));
  const lean = (entry: Estimated, exponent: number): number => (exponent === 0 ? 1 : (bestMs / Math.max(bestMs, entry.expectedMs)) ** exponent);
  const memberSet = new Set(members.map((member) => member.server));
  // Mean requests in an M/M/1 server at utilisation u: u / (1 − u) (Kleinrock 1975, eq. 3.24),
  // of the load above the floor (a server busier than loadSpreadFloorShare, rescaled to [0, 1)).
  const floor = options.loadSpreadFloorShare;
  const queued = (server: ServerId): number => {
    const u = Math.min(0.99, Math.max(0, (busyShare(server) - floor) / (1 - floor)));
    return u / (1 - u);
  };
  const setQueued = members.length === 0 ? 0 : members.reduce((sum, member) => sum + queued(member.server), 0) / members.length;
  const spill = memory.update(Math.min(1, options.loadSpreadShare * setQueued), nowMs, options);
  return ranked.map((entry) => {
    const free = 1 / (1 + queued(entry.server));
    const weight = memberSet.has(entry.server) ? lean(entry, options.equivalentSetWeightExponent) * free : spill * lean(entry, options.loadSpreadExponent) * free;
    return { server: entry.server, weight };
  });
}

/**
 * The spill rises at once with the members' queue and falls back with a half-life
 * (loadSpreadReleaseHalfLifeMs): the clients leave a queueing server quickly and return to
 * it slowly, as TCP backs off multiplicatively and probes back additively (Chiu and Jain,
 * "Analysis of the increase and decrease algorithms for congestion avoidance", 1989) —
 * otherwise every client would see the drained server's fresh low S at once and come back
 * together.
 */
export class SpillMemory {
  value = 0;
  private atMs = -Infinity;

  /** Spilling at all (≥ 1 %): below, the servers count as idle and each request draws afresh (no inertia, keepDrawn). */
  get loaded(): boolean {
    return this.value >= 0.01;
  }

  update(spill: number, nowMs: number, options: HerdOptions): number {
    const elapsedMs = Math.max(0, nowMs - this.atMs);
    const held = this.value * 2 ** (-elapsedMs / Math.max(1, options.loadSpreadReleaseHalfLifeMs));
    this.value = Math.max(spill, held);
    this.atMs = nowMs;
    return this.value;
  }
}

/** One server drawn with probability weight / Σ weight; `fallback` when no weight is positive. `random` in [0, 1). */
export function drawWeighted(spread: readonly Spread[], random: () => number, fallback: ServerId | undefined): ServerId | undefined {
  const positive = spread.filter((entry) => entry.weight > 0);
  // One candidate: no draw (the policy's random stream is the same as without a spread).
  if (positive.length <= 1) return positive[0]?.server ?? fallback;
  const total = positive.reduce((sum, entry) => sum + entry.weight, 0);
  let draw = random() * total;
  for (const entry of positive) {
    draw -= entry.weight;
    if (draw < 0) return entry.server;
  }
  return fallback;
}

/**
 * Inertia: the client keeps the server it drew last while that server still has a weight,
 * and draws again only with probability `spreadRedrawShare` per request (or when the server
 * it holds has none: it left the set, failed, or is not a candidate). Over many requests the
 * client's choices still follow the weights; but the clients together move toward a server
 * that has just become attractive by at most that share of their requests at a time, so the
 * herd cannot land on it within one push interval (Fischer and Vöcking 2009: migration at a
 * bounded rate converges on stale information where best response oscillates).
 */
export function keepDrawn(
  spread: readonly Spread[],
  state: { drawn?: ServerId },
  random: () => number,
  options: HerdOptions,
  fallback: ServerId | undefined,
  loaded: boolean,
): ServerId | undefined {
  const held = state.drawn === undefined || !loaded ? undefined : spread.find((entry) => entry.server === state.drawn);
  if (held !== undefined && held.weight > 0 && random() >= options.spreadRedrawShare) return held.server;
  const drawn = drawWeighted(spread, random, fallback);
  state.drawn = drawn;
  return drawn;
}

/** The spread's state for one set of replicas: the spill of its members' load, and the server drawn last. */
export interface SpreadState {
  spill: SpillMemory;
  drawn?: ServerId;
}

/**
 * The spread's state per set of replicas (the candidates of a request, in any order): a page's
 * images and its scripts may be bound to different replicas, and one set's load must neither
 * spill the other's requests off an idle server nor make it draw again (a client that
 * alternated would lose its inertia). At most `maxSets` sets are held; the least recently
 * used one is dropped.
 */
export class SpreadStates {
  private readonly bySet = new Map<string, SpreadState>();

  constructor(private readonly maxSets = 64) {}

  of(candidates: readonly ServerId[]): SpreadState {
    const key = [...candidates].sort().join(' ');
    const state = this.bySet.get(key) ?? { spill: new SpillMemory() };
    this.bySet.delete(key);
    this.bySet.set(key, state);
    if (this.bySet.size > this.maxSets) this.bySet.delete(this.bySet.keys().next().value as string);
    return state;
  }
}
