/**
 * Invalidation across the cluster (GOS Section 4.6: the home "will send invalidation
 * messages to the other nodes"; IBM's API invalidates the whole cache array). We send the
 * invalidation to every configured peer, not only to the homes' known holders, because
 * holder lists are approximate (they travel with periodic reports).
 *
 * Guarantee: `invalidateEverywhere` resolves after this server's copies are gone and every
 * peer that answered has removed its copies (each peer within `peerTimeoutMs`). A peer that
 * did not answer is listed as `pending`: it is marked down, so no other server takes a copy
 * from it or sends it lookups, and the invalidation is retried on every report beat
 * (`cacheReportIntervalMs`) until it acknowledges. A copy read before the invalidation and
 * still in flight (a fill, a second chance) is refused on arrival (invalidation-log.ts).
 */
import type { InvalidateBody } from './peer-protocol.js';
import type { CooperativeCache, InvalidationTarget } from './cooperative-cache.js';
import { matchesTarget } from '../memory-cache.js';

export interface InvalidationOutcome {
  /** Copies removed from this server's memory. */
  removed: number;
  /** Peers that confirmed the removal of their copies. */
  acknowledged: string[];
  /** Peers that did not answer: retried until they do. */
  pending: string[];
}


/** The most paths and prefixes owed to one peer before they collapse into the prefix "/". */
const MAX_OWED_TARGETS = 1000;

export class ClusterInvalidation {
  private readonly pending = new Map<string, InvalidateBody[]>();
  private retrying = false;

  constructor(private readonly cache: CooperativeCache) {
    cache.reporter.onBeat = () => void this.retryPending();
  }

  get pendingPeers(): string[] {
    return [...this.pending.keys()];
  }

  async invalidateEverywhere(target: InvalidationTarget): Promise<InvalidationOutcome> {
    const body: InvalidateBody = { paths: 'path' in target ? [target.path] : [], prefixes: 'prefix' in target ? [target.prefix] : [], atMs: Date.now() };
    const removed = this.applyLocally(target, body.atMs);
    const peers = this.cache.membership.peers;
    this.cache.counters.invalidationsSent += 1;
    const results = await Promise.allSettled(peers.map((peer) => this.cache.client.invalidate(peer, body)));
    const acknowledged: string[] = [];
    const pending: string[] = [];
    results.forEach((result, index) => {
      const peer = peers[index] as string;
      if (result.status === 'fulfilled') acknowledged.push(peer);
      else {
        pending.push(peer);
        this.owe(peer, body);
        this.cache.membership.markDown(peer);
      }
    });
    return { removed, acknowledged, pending };
  }

  /**
   * Adds `body` to what `peer` is owed. Beyond MAX_OWED_TARGETS paths and prefixes, the debt
   * becomes one invalidation of the prefix "/" (everything it holds): dropping the oldest
   * would leave their stale copies served for ever, and dropping some of a peer's memory
   * costs only refills.
   */
  private owe(peer: string, body: InvalidateBody): void {
    const owed = [...(this.pending.get(peer) ?? []), body];
    const targets = owed.reduce((sum, each) => sum + each.paths.length + each.prefixes.length, 0);
    this.pending.set(peer, targets <= MAX_OWED_TARGETS ? owed : [{ paths: [], prefixes: ['/'], atMs: Math.max(...owed.map((each) => each.atMs)) }]);
  }

  /** An invalidation from a peer. Returns how many copies were removed here. */
  receive(body: InvalidateBody): number {
    this.cache.counters.invalidationsReceived += 1;
    let removed = 0;
    for (const path of body.paths) removed += this.applyLocally({ path }, body.atMs);
    for (const prefix of body.prefixes) removed += this.applyLocally({ prefix }, body.atMs);
    return removed;
  }

  private applyLocally(target: InvalidationTarget, atMs: number): number {
    // Recorded first: a copy arriving from now on that was read before `atMs` is refused
    // (and, for a short grace, one read before this arrival: invalidation-log.ts).
    this.cache.invalidations.record(target, atMs);
    this.cache.counts.forgetCopies((key) => matchesTarget(key, target));
    return this.cache.localCache?.remove(target) ?? 0;
  }

  private async retryPending(): Promise<void> {
    if (this.retrying || this.pending.size === 0) return;
    this.retrying = true;
    try {
      await Promise.allSettled(
        [...this.pending].map(async ([peer, bodies]) => {
          const merged: InvalidateBody = { paths: bodies.flatMap((b) => b.paths), prefixes: bodies.flatMap((b) => b.prefixes), atMs: Math.max(...bodies.map((b) => b.atMs)) };
          await this.cache.client.invalidate(peer, merged);
          if (this.pending.get(peer) === bodies) this.pending.delete(peer);
        }),
      );
    } finally {
      this.retrying = false;
    }
  }
}
