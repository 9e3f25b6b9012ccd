/**
 * Which servers of the cluster are live, as far as the cooperative cache is concerned: this
 * server plus every peer not currently known to be down. A peer is marked down when a
 * cache call to it fails (network error or timeout) or when an outside liveness source says
 * so; it is up again after its next successful call (the periodic count reports probe it).
 * Homes are computed over the live servers (rendezvous.ts), so a dead server's objects get
 * new homes as soon as a call to it fails, and get their old home back when it answers.
 *
 * The ranking of every configured server for a path is computed once (one hash per server)
 * and kept in a bounded table: filtered by liveness it is the ranking over the live servers
 * (rendezvous hashing ranks each server independently), so membership changes need no
 * recomputation, and a request does not hash again (profiled: the hashes were about 40 % of
 * the memory cache's own time on a local hit).
 *
 * Pure: the clock is injected.
 */
import { LRUCache } from 'lru-cache';
import { rankServers } from './rendezvous.js';

/** Paths whose ranking is kept. */
const MAX_RANKINGS = 100_000;

/** An outside opinion about a peer (for example a pinger's); undefined: no opinion. */
export type LivenessSource = (peer: string) => boolean | undefined;

export interface MembershipOptions {
  self: string;
  peers: readonly string[];
  /** A peer marked down is not used for this long unless a call to it succeeds first. */
  downForMs: number;
  liveness?: LivenessSource;
  now?: () => number;
}

export class Membership {
  private readonly downUntilMs = new Map<string, number>();
  private readonly now: () => number;
  private readonly listeners: ((peer: string, live: boolean) => void)[] = [];
  private readonly rankings = new LRUCache<string, string[]>({ max: MAX_RANKINGS });

  constructor(private readonly options: MembershipOptions) {
    this.now = options.now ?? Date.now;
  }

  get self(): string {
    return this.options.self;
  }

  get peers(): readonly string[] {
    return this.options.peers;
  }

  isLive(peer: string): boolean {
    if (peer === this.options.self) return true;
    const outside = this.options.liveness?.(peer);
    if (outside === false) return false;
    const until = this.downUntilMs.get(peer);
    return until === undefined || until <= this.now();
  }

  /** This server and the live peers, in configuration order. */
  liveServers(): string[] {
    return [this.options.self, ...this.options.peers.filter((peer) => this.isLive(peer))];
  }

  livePeers(): string[] {
    return this.options.peers.filter((peer) => this.isLive(peer));
  }

  homeOf(path: string): string {
    return this.rankingOf(path).find((server) => this.isLive(server)) ?? this.options.self;
  }

  /** The `k` live servers that keep a hot object, best first (the home is the first). */
  hotServersOf(path: string, k: number): string[] {
    return this.rankingOf(path)
      .filter((server) => this.isLive(server))
      .slice(0, Math.max(0, k));
  }

  /** Every configured server (this one too), best first for `path`. */
  private rankingOf(path: string): string[] {
    let ranking = this.rankings.get(path);
    if (ranking === undefined) {
      ranking = rankServers(path, [this.options.self, ...this.options.peers]);
      this.rankings.set(path, ranking);
    }
    return ranking;
  }

  /** A call to `peer` failed at the network level. */
  markDown(peer: string): void {
    const wasLive = this.isLive(peer);
    this.downUntilMs.set(peer, this.now() + this.options.downForMs);
    if (wasLive) for (const listener of this.listeners) listener(peer, false);
  }

  /** A call to `peer` succeeded. */
  markUp(peer: string): void {
    if (!this.downUntilMs.has(peer)) return;
    this.downUntilMs.delete(peer);
    for (const listener of this.listeners) listener(peer, true);
  }

  /** Peers marked down by a failed call (not by the outside source). */
  downPeers(): string[] {
    return [...this.downUntilMs.keys()];
  }

  onChange(listener: (peer: string, live: boolean) => void): void {
    this.listeners.push(listener);
  }
}
