/**
 * What to replicate, and where: DCWS's Algorithm 1 (Baker and Moon 1998, Figure 4) and
 * its choice of co-op (Section 4.2), adapted to bindings. Pure: figures in, one decision out.
 *
 * 1. A server places nothing unless its load exceeds the cluster's mean by the overload
 *    ratio r:  load_self > (1 + r) · mean(load of self and every live, fresh peer),
 *    and is at least `minLoad`.
 * 2. Co-ops: live peers less loaded than this server, least loaded first (Section 4.2:
 *    "the server with the lowest LoadMetric value is selected"), that are under their
 *    count and byte limits and accepted no automatic replica within T_coop.
 * 3. Candidates (Algorithm 1, steps 1–3): this server's resources with hits in the window,
 *    minus the pinned entry points (step 2), minus those the co-op already holds or gave
 *    back within T_home (no flaps), minus those that do not fit its byte budget or exceed
 *    the largest replica it stores; keep those with hits ≥ T, halving T until some
 *    qualify (step 3).
 * 4. Steps 4–5 rank by links to rewrite, which Web++ never does; in their place the
 *    candidate with the fewest replicas wins (spreading load over resources), then the
 *    one with the most hits.
 */
import type { ResourceRow } from './load-table.js';

export interface CoopView {
  server: string;
  load: number;
  /** Automatic replicas it holds (all homes) and their bytes. */
  automaticCount: number;
  automaticBytes: number;
  /** When it last accepted an automatic replica (any home); 0: never. */
  lastAcceptedAtMs: number;
  /** Largest replica it stores (its lazy fetch refuses more). */
  maxReplicaBytes: number;
}

interface MigrationPolicy {
  overloadRatio: number;
  minLoad: number;
  hitThreshold: number;
  coopIntervalMs: number;
  homeMs: number;
  maxPerCoop: number;
  maxBytesPerCoop: number;
}

export interface MigrationInput {
  nowMs: number;
  selfLoad: number;
  /** Live peers with fresh load records. */
  peers: CoopView[];
  /** This server's resources, most hits first (LoadTable.resources()). */
  resources: ResourceRow[];
  policy: MigrationPolicy;
  /** Whether a path may be replicated at all (prefixes, pins, home of it). */
  eligible: (path: string) => boolean;
  /** Physical origins that already list `path` (home included). */
  holders: (path: string) => ReadonlySet<string>;
  /** When `path` was last withdrawn from or recalled from `coop`; undefined: never. */
  lastRemovedAtMs: (path: string, coop: string) => number | undefined;
}

export type MigrationDecision =
  | { kind: 'none'; reason: string }
  | { kind: 'place'; path: string; coop: string; hits: number; sizeBytes: number; threshold: number; reason: string };

const fixed = (value: number): string => (Number.isInteger(value) ? String(value) : value.toFixed(2));

/** Mean load of this server and the given peers. */
export function clusterMean(selfLoad: number, peers: readonly { load: number }[]): number {
  return (selfLoad + peers.reduce((sum, peer) => sum + peer.load, 0)) / (peers.length + 1);
}

export function selectMigration(input: MigrationInput): MigrationDecision {
  const { policy, selfLoad, nowMs } = input;
  if (input.peers.length === 0) return { kind: 'none', reason: 'no live peer with a fresh load record' };
  const mean = clusterMean(selfLoad, input.peers);
  if (selfLoad < policy.minLoad) return { kind: 'none', reason: `load ${fixed(selfLoad)} below the minimum ${fixed(policy.minLoad)}` };
  if (selfLoad <= (1 + policy.overloadRatio) * mean) {
    return { kind: 'none', reason: `load ${fixed(selfLoad)} within ${fixed(1 + policy.overloadRatio)} × cluster mean ${fixed(mean)}` };
  }
  const coops = input.peers
    .filter((peer) => peer.load < selfLoad)
    .filter((peer) => peer.automaticCount < policy.maxPerCoop && peer.automaticBytes < policy.maxBytesPerCoop)
    .filter((peer) => peer.lastAcceptedAtMs === 0 || nowMs - peer.lastAcceptedAtMs >= policy.coopIntervalMs)
    .sort((a, b) => a.load - b.load || (a.server < b.server ? -1 : 1));
  if (coops.length === 0) return { kind: 'none', reason: 'overloaded, but every less-loaded peer is at its limits or within T_coop' };
  const eligible = input.resources.filter((row) => row.hits > 0 && input.eligible(row.path));
  for (const coop of coops) {
    const budgetBytes = Math.min(policy.maxBytesPerCoop - coop.automaticBytes, coop.maxReplicaBytes);
    const candidates = eligible.filter((row) => {
      if (input.holders(row.path).has(coop.server) || row.sizeBytes > budgetBytes) return false;
      const removedAtMs = input.lastRemovedAtMs(row.path, coop.server);
      return removedAtMs === undefined || nowMs - removedAtMs >= policy.homeMs;
    });
    if (candidates.length === 0) continue;
    // Algorithm 1, step 3: lower T until something qualifies.
    let threshold = policy.hitThreshold;
    let qualified = candidates.filter((row) => row.hits >= threshold);
    while (qualified.length === 0 && threshold > 1) {
      threshold = Math.max(1, Math.floor(threshold / 2));
      qualified = candidates.filter((row) => row.hits >= threshold);
    }
    const replicasOf = (row: ResourceRow): number => input.holders(row.path).size;
    qualified.sort((a, b) => replicasOf(a) - replicasOf(b) || b.hits - a.hits || (a.path < b.path ? -1 : 1));
    const chosen = qualified[0] as ResourceRow;
    return {
      kind: 'place',
      path: chosen.path,
      coop: coop.server,
      hits: chosen.hits,
      sizeBytes: chosen.sizeBytes,
      threshold,
      reason:
        `load ${fixed(selfLoad)} > ${fixed(1 + policy.overloadRatio)} × cluster mean ${fixed(mean)}; ` +
        `${chosen.path} has ${chosen.hits} hits (T = ${threshold}); least-loaded co-op ${coop.server} (load ${fixed(coop.load)})`,
    };
  }
  return { kind: 'none', reason: 'overloaded, but no eligible resource fits a co-op' };
}
