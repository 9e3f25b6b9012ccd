/**
 * The latest service time each peer pushed (issue 13): learned from the peer exchange
 * (peer-load-exchange.ts), and forwarded to clients in the `webpp-load` header, so that a
 * client learns a replica's load without having talked to it (Fei et al. 1998, Section 4:
 * servers push to the resolvers that serve their clients; here the resolver is every
 * client's worker, reached through whichever replica it talks to).
 *
 * Times are this server's clock: a value received `ageMs` after its peer pushed it is kept as
 * pushed at now − ageMs, so clocks need not agree. A message is applied only when its
 * `sentAtMs` (the sender's clock) is newer than the last one applied from that sender, so a
 * replayed message changes nothing.
 */
import { canonicalUrl, type PushedLoad } from '@webpp/core';
import type { PeerLoadMessage } from './peer-load-message.js';

interface PeerLoad {
  serviceMs: number;
  pushedAtMs: number;
  sentAtMs: number;
}

/** Servers remembered at most (a cluster is at most 256 peers, plugin-schema.ts). */
const MAX_PEERS = 256;

export class PeerLoads {
  private readonly loads = new Map<string, PeerLoad>();

  /** @param self this server's public origin: never stored as a peer. */
  constructor(private readonly self: string) {}

  /** Applies a peer's message received at `nowMs`; false when it is not newer, malformed, or from this server. */
  learn(message: PeerLoadMessage, nowMs: number): boolean {
    const server = originOf(message.server);
    if (server === undefined || server === this.self) return false;
    const held = this.loads.get(server);
    if (held !== undefined && held.sentAtMs >= message.sentAtMs) return false;
    if (held === undefined && this.loads.size >= MAX_PEERS) return false;
    this.loads.set(server, { serviceMs: message.serviceMs, pushedAtMs: nowMs - message.ageMs, sentAtMs: message.sentAtMs });
    return true;
  }

  /** Every peer's value pushed within `maxAgeMs`. */
  fresh(nowMs: number, maxAgeMs: number): PushedLoad[] {
    const fresh: PushedLoad[] = [];
    for (const [server, load] of this.loads) {
      const ageMs = Math.max(0, nowMs - load.pushedAtMs);
      if (ageMs <= maxAgeMs) fresh.push({ server, serviceMs: load.serviceMs, ageMs });
    }
    return fresh;
  }
}

function originOf(value: string): string | undefined {
  const url = canonicalUrl(value);
  if (url === undefined) return undefined;
  const parsed = new URL(url);
  return parsed.pathname === '/' && parsed.search === '' ? parsed.origin : undefined;
}
