/**
 * The home (owner) of a cached object among the live servers: rendezvous, or highest random
 * weight, hashing (Thaler & Ravishankar, "Using name-based mappings to increase hit rates",
 * IEEE/ACM ToN 6(1), 1998). Every server scores every (server, key) pair with one hash and
 * the highest score wins. It is the CARP scheme of IBM's accelerator (Song et al. 2002,
 * Section 3.2: "the primary owner for an object is the one resulting in the highest
 * combined hash score"), and GOS's home node (Chen, Wang, Lau, Section 3.1).
 *
 * Stable under membership change: when a server leaves, only the keys it owned move (each
 * to the server with the next highest score for that key); when one joins, only the keys
 * it now wins move to it. Hot objects live on the `k` servers with the highest scores
 * (IBM Section 3.2: "stored in the n caches resulting in the highest combined hashing score").
 *
 * Servers are named by their public origin (`scheme://host:port`), the same string on every
 * server of the cluster, so that every server computes the same home.
 */
import { createHash } from 'node:crypto';

/** The 64-bit score of `server` for `key` (the first 8 bytes of an MD5 over both: uniform, not secret). */
function score(server: string, key: string): bigint {
  return createHash('md5').update(server).update('\n').update(key).digest().readBigUInt64BE(0);
}

/** The `k` servers with the highest scores for `key`, best first (ties: by name, so every server agrees). */
export function rankServers(key: string, servers: readonly string[], k: number = servers.length): string[] {
  const scored = servers.map((server) => ({ server, score: score(server, key) }));
  scored.sort((a, b) => (a.score === b.score ? (a.server < b.server ? -1 : 1) : a.score > b.score ? -1 : 1));
  return scored.slice(0, Math.max(0, k)).map((entry) => entry.server);
}

/** The home of `key` among `servers` (undefined when there is none). */
export function homeOf(key: string, servers: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestScore = -1n;
  for (const server of servers) {
    const candidate = score(server, key);
    if (candidate > bestScore || (candidate === bestScore && best !== undefined && server < best)) {
      best = server;
      bestScore = candidate;
    }
  }
  return best;
}
