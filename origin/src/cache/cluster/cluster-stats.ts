/**
 * Accounting of the cooperative cache, in the terms of IBM's accelerator (Song et al. 2002,
 * Section 3.1.2: a *member miss* answered by another member is an *array hit*; a miss
 * everywhere is an *array miss*) and of GOS (Section 5.3: local, peer, disk objects).
 * Counters of this server, and the cluster's totals: every count report a peer sends
 * carries its counters, so each server knows the others' as of their last report.
 */

/** This server's counters of the cooperative layer (the local cache counts its own hits). */
export class ClusterCounters {
  /** Lookups sent to peers after a local miss. */
  lookupsSent = 0;
  /** Member misses answered from a peer's memory (array hits). */
  peerHits = 0;
  /** Bytes of bodies obtained from peers' memory. */
  peerHitBytes = 0;
  /** Local misses no peer could answer: served from disk or upstream (array misses). */
  arrayMisses = 0;
  /** Lookups this server answered for peers, and how many of them from its memory. */
  lookupsServed = 0;
  lookupHitsServed = 0;
  /** 404s of a home naming another holder. */
  holderHints = 0;
  /** Copies sent to their home after an array miss, and copies received and kept as home. */
  fillsSent = 0;
  fillsKept = 0;
  /** Evicted singlets forwarded to a random peer, and those kept, forwarded again or dropped on arrival. */
  secondChancesSent = 0;
  secondChancesKept = 0;
  secondChancesForwarded = 0;
  secondChancesDropped = 0;
  /** Pushes not sent because too many were in flight. */
  pushesSkipped = 0;
  /** Pushes refused because an invalidation came after the copy was read, or it was stale. */
  pushesRefusedStale = 0;
  reportsSent = 0;
  reportsFailed = 0;
  reportsReceived = 0;
  invalidationsSent = 0;
  invalidationsReceived = 0;
  /** Peer calls that failed at the network level. */
  peerErrors = 0;

  toJSON(): Record<string, number> {
    return { ...this } as unknown as Record<string, number>;
  }
}

/** The last counters each peer reported (with its local cache's counters), for the cluster totals. */
export class ClusterTotals {
  private readonly byServer = new Map<string, { atMs: number; counters: Record<string, number> }>();

  record(server: string, counters: Record<string, number>, atMs: number): void {
    this.byServer.set(server, { atMs, counters });
  }

  /** Per server (this one's counters given fresh) and the sum over all of them. */
  snapshot(self: string, own: Record<string, number>, nowMs: number): { servers: Record<string, { ageMs: number; counters: Record<string, number> }>; total: Record<string, number> } {
    const servers: Record<string, { ageMs: number; counters: Record<string, number> }> = { [self]: { ageMs: 0, counters: own } };
    for (const [server, entry] of this.byServer) servers[server] = { ageMs: nowMs - entry.atMs, counters: entry.counters };
    const total: Record<string, number> = {};
    for (const { counters } of Object.values(servers)) {
      for (const [name, value] of Object.entries(counters)) total[name] = (total[name] ?? 0) + value;
    }
    return { servers, total };
  }
}
