/**
 * The latest service time each peer pushed (issue 13): learned from the peer exchange, and
 * forwarded to clients in the `webpp-load` header, so that a client learns a replica's load
 * without having talked to it (Fei et al. 1998, Section 4: servers push to the resolvers
 * that serve their clients; here the resolver is every client's worker, reached through
 * whichever replica it talks to). Times are this server's clock: a value received `ageMs`
 * after its peer pushed it is stored as pushed at now − ageMs, so clocks need not agree.
 */
import type { PushedLoad } from '@webpp/core';

interface PeerLoad {
  serviceMs: number;
  pushedAtMs: number;
}

export class PeerLoads {
  private readonly loads = new Map<string, PeerLoad>();

  constructor(private readonly peers: readonly string[]) {}

  /** A peer's value; values of servers that are not peers, or older than what is held, are ignored. */
  learn(server: string, serviceMs: number, ageMs: number, nowMs: number): boolean {
    if (!this.peers.includes(server) || !Number.isFinite(serviceMs) || serviceMs < 0 || !(ageMs >= 0)) return false;
    const pushedAtMs = nowMs - ageMs;
    const held = this.loads.get(server);
    if (held !== undefined && held.pushedAtMs > pushedAtMs) return false;
    this.loads.set(server, { serviceMs, pushedAtMs });
    return true;
  }

  /** Every peer's value pushed within `maxAgeMs`, in the order of `peers`. */
  fresh(nowMs: number, maxAgeMs: number): PushedLoad[] {
    const fresh: PushedLoad[] = [];
    for (const server of this.peers) {
      const load = this.loads.get(server);
      if (load === undefined) continue;
      const ageMs = Math.max(0, nowMs - load.pushedAtMs);
      if (ageMs <= maxAgeMs) fresh.push({ server, serviceMs: load.serviceMs, ageMs });
    }
    return fresh;
  }
}
