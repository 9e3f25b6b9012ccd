/**
 * The cluster layer of the memory cache: the servers' hot object caches form one global
 * object space (GOS, Chen, Wang, Lau, Sections 3–4; IBM's cache array, Song et al. 2002,
 * Section 3). This class decides; the local cache (cache-core) stores and the peer routes
 * (routes/peer-cache.ts) carry the calls.
 *
 * - Home: rendezvous hashing over the live servers (rendezvous.ts, membership.ts).
 * - Counts: approximated global access counts reported to the home (access-counts.ts).
 * - Local miss: ask the home, which answers from its memory or names a holder; ask that
 *   holder; only then disk or upstream (GOS Figure 2; IBM's member miss / array hit).
 * - Placement: the home keeps what its policy admits (IBM: "if an object is cached in at
 *   least one cache member, the primary owner is guaranteed to contain a copy"), so a copy
 *   read from disk elsewhere is sent to its home (a fill). Other servers keep a copy of hot
 *   objects (global count in the top `hotShare` of the counts, hot-threshold.ts) when they
 *   are among the `hotCopies` best-ranked servers of the object (IBM Section 3.2). So the
 *   cluster's memory holds about one copy of each warm object plus k of each hot one: the
 *   hottest objects are served locally everywhere and only the warm tail pays a peer hop.
 * - Second chance: a home evicting a singlet (counted at least twice) forwards it to a random live peer with a
 *   recirculation count (GOS Section 4.5, xFS N-chance; N = 2); a peer whose policy rejects
 *   it decrements the count and forwards it again while the count is positive.
 * - Invalidation: removes the copies everywhere before it resolves (cluster-invalidation.ts).
 */
import { AccessCounts } from './access-counts.js';
import { ClusterCounters, ClusterTotals } from './cluster-stats.js';
import { InvalidationLog } from './invalidation-log.js';
import { Membership } from './membership.js';
import { PeerClient } from './peer-client.js';
import { ReplayGuard } from './replay-guard.js';
import { CountReporter } from './count-reporter.js';
import { HotThreshold } from './hot-threshold.js';
import type { CacheObject, PushReason } from './peer-protocol.js';
import type { CooperativeCacheOptions, LocalCache } from './cooperative-types.js';

export type { InvalidationTarget, LocalCache } from './cooperative-types.js';

/** A hot object has been counted at least this often (one request is not popularity). */
const MIN_HOT_COUNT = 2;
/**
 * An evicted singlet gets a second chance only when counted at least this often: a one-hit
 * wonder is refused by the LFU policies anyway (bench counters: at a full cache about half of
 * the second chances were forwarded again or dropped), and each costs a signed POST with its body.
 */
const MIN_SECOND_CHANCE_COUNT = 2;
/** The hot threshold is recomputed at most this often. */
const HOT_RECOMPUTE_MS = 1000;

export class CooperativeCache {
  readonly counts: AccessCounts;
  readonly membership: Membership;
  readonly counters = new ClusterCounters();
  readonly totals = new ClusterTotals();
  readonly replayGuard: ReplayGuard;
  readonly invalidations: InvalidationLog;
  readonly client: PeerClient;
  readonly reporter: CountReporter;
  private local: LocalCache | undefined;
  private pushesInFlight = 0;
  private readonly hotThreshold: HotThreshold;
  private readonly now: () => number;
  private readonly random: () => number;

  constructor(readonly options: CooperativeCacheOptions) {
    this.now = options.now ?? Date.now;
    this.random = options.random ?? Math.random;
    this.membership = new Membership({ self: options.self, peers: options.peers, downForMs: Math.max(1000, options.reportIntervalMs * 3), liveness: options.liveness, now: this.now });
    this.counts = new AccessCounts({ self: options.self, reportThreshold: options.reportThreshold, agingIntervalMs: options.agingIntervalMs, maxObjects: 100_000, now: this.now });
    this.client = new PeerClient({ secret: options.secret, timeoutMs: options.peerTimeoutMs, membership: this.membership, maxObjectBytes: options.maxObjectBytes });
    this.replayGuard = new ReplayGuard(options.maxClockSkewMs, 200_000, this.now);
    // Grace: a copy in flight when an invalidation arrives is at most one peer call old.
    this.invalidations = new InvalidationLog(Math.max(options.maxClockSkewMs, 60_000), 10_000, this.now, options.peerTimeoutMs);
    this.reporter = new CountReporter(this, options.reportIntervalMs);
    this.hotThreshold = new HotThreshold({ share: options.hotShare, minCount: MIN_HOT_COUNT, recomputeMs: HOT_RECOMPUTE_MS, now: this.now });
    // A dead server's copies are no longer hinted; when membership changes, homes move:
    // every server tells the (new) homes what it holds with its next report.
    this.membership.onChange((peer, live) => {
      if (!live) this.counts.forgetHolder(peer);
      this.counts.reannounceHolds();
    });
  }

  attach(local: LocalCache): void {
    this.local = local;
  }

  get localCache(): LocalCache | undefined {
    return this.local;
  }

  homeOf(path: string): string {
    return this.membership.homeOf(path);
  }

  /** The count the replacement policy ranks `path` by: the approximated global count. */
  countOf(path: string): number {
    return this.counts.countOf(path);
  }

  /** One request for `path` reached this server (hit or miss): counted, reported at the threshold. */
  recordAccess(path: string): void {
    if (this.counts.hit(path, this.homeOf(path))) this.reporter.reportSoon(path);
  }

  /** Whether `path`'s global count is in the top `hotShare` of the counts this server knows. */
  isHot(path: string): boolean {
    return this.countOf(path) >= this.hotThreshold.current(this.counts.trackedObjects, () => this.counts.trackedCounts());
  }

  /** Whether this server keeps its own copy of `path` (see the placement rule above). */
  keepsCopy(path: string): boolean {
    const { self } = this.options;
    if (this.homeOf(path) === self) return true;
    return this.isHot(path) && this.membership.hotServersOf(path, this.options.hotCopies).includes(self);
  }

  /** A local miss: the copy in a peer's memory, or undefined (then: disk or upstream). */
  async lookup(path: string): Promise<CacheObject | undefined> {
    const { self } = this.options;
    for (let attempt = 0; attempt < 2; attempt += 1) {
      const home = this.homeOf(path);
      let holder: string | undefined;
      if (home === self) {
        holder = this.counts.holdersOf(path).find((server) => server !== self && this.membership.isLive(server));
      } else {
        this.counters.lookupsSent += 1;
        try {
          const answer = await this.client.lookup(home, path, true);
          if (answer.count !== undefined) this.counts.applyFeedback([[path, answer.count]]);
          if (answer.object !== undefined && this.usable(answer.object)) return this.peerHit(answer.object);
          holder = answer.holder === self ? undefined : answer.holder;
        } catch {
          this.counters.peerErrors += 1;
          continue; // the home is marked down: its objects have a new home, ask that one
        }
      }
      if (holder !== undefined) {
        this.counters.lookupsSent += 1;
        try {
          const answer = await this.client.lookup(holder, path, false);
          if (answer.object !== undefined && this.usable(answer.object)) return this.peerHit(answer.object);
        } catch {
          this.counters.peerErrors += 1;
        }
      }
      break;
    }
    this.counters.arrayMisses += 1;
    return undefined;
  }

  /**
   * A copy was just read from disk or upstream: it goes to its home, unless this is the home.
   * Returns whether this server keeps it too (the local policy still decides).
   */
  placeFill(object: CacheObject): boolean {
    if (this.homeOf(object.path) === this.options.self) return true;
    // The home holds a copy of whatever the cluster holds (IBM's primary owner), so the next
    // miss elsewhere finds it there; this server may keep one too.
    this.counters.fillsSent += 1;
    this.pushLater(this.homeOf(object.path), object, 'fill', 0);
    return this.keepsCopy(object.path);
  }

  /** The local cache kept a copy of `path`. */
  stored(path: string): void {
    this.counts.setHolds(path, true, this.homeOf(path));
  }

  /** The local cache evicted `object` to make room: a singlet at its home gets a second chance. */
  evicted(object: CacheObject): void {
    const home = this.homeOf(object.path);
    this.counts.setHolds(object.path, false, home);
    if (home !== this.options.self || this.options.recirculation <= 0) return;
    const others = this.counts.holdersOf(object.path).filter((server) => server !== this.options.self && this.membership.isLive(server));
    if (others.length > 0 || !this.usable(object) || this.countOf(object.path) < MIN_SECOND_CHANCE_COUNT) return;
    const target = this.randomPeer([]);
    if (target === undefined) return;
    this.counters.secondChancesSent += 1;
    this.pushLater(target, object, 'second-chance', this.options.recirculation);
  }

  /** A lookup from a peer. `asHome`: the asker thinks this server is the home, so it may name a holder. */
  serveLookup(path: string, asHome: boolean, from: string | undefined): { object: CacheObject | undefined; holder: string | undefined; count: number } {
    this.counters.lookupsServed += 1;
    const object = this.local?.peek(path);
    const count = this.countOf(path);
    if (object !== undefined && this.usable(object)) {
      this.counters.lookupHitsServed += 1;
      return { object, holder: undefined, count };
    }
    const holder = asHome ? this.counts.holdersOf(path).find((server) => server !== this.options.self && server !== from && this.membership.isLive(server)) : undefined;
    if (holder !== undefined) this.counters.holderHints += 1;
    return { object: undefined, holder, count };
  }

  /** A copy pushed by a peer. Returns whether this server kept it. */
  receivePush(object: CacheObject, reason: PushReason, recirculation: number, from: string | undefined): boolean {
    if (!this.usable(object)) {
      this.counters.pushesRefusedStale += 1;
      return false;
    }
    const kept = this.local?.offer(object) ?? false;
    if (reason === 'fill') {
      if (kept) this.counters.fillsKept += 1;
      return kept;
    }
    if (kept) {
      this.counters.secondChancesKept += 1;
      return true;
    }
    // Rejected by this server's policy: one chance less (GOS Section 4.5).
    const remaining = recirculation - 1;
    const target = remaining > 0 ? this.randomPeer(from === undefined ? [] : [from]) : undefined;
    if (target === undefined) {
      this.counters.secondChancesDropped += 1;
      return false;
    }
    this.counters.secondChancesForwarded += 1;
    this.pushLater(target, object, 'second-chance', remaining);
    return false;
  }

  /** Counters of this server (the local cache's and the cluster layer's) and of the cluster. */
  snapshot(): ReturnType<ClusterTotals['snapshot']> & { self: string; livePeers: string[]; downPeers: string[] } {
    const own = { ...(this.local?.counters() ?? {}), ...this.counters.toJSON() };
    return { self: this.options.self, livePeers: this.membership.livePeers(), downPeers: this.membership.downPeers(), ...this.totals.snapshot(this.options.self, own, this.now()) };
  }

  start(): void {
    this.reporter.start();
  }

  async stop(): Promise<void> {
    await this.reporter.stop();
    await this.client.close();
  }

  /** Fresh, and not read before a later invalidation. */
  private usable(object: CacheObject): boolean {
    return object.expiresAtMs > this.now() && object.body.byteLength <= this.options.maxObjectBytes && this.invalidations.isCurrent(object.path, object.readAtMs);
  }

  private peerHit(object: CacheObject): CacheObject {
    this.counters.peerHits += 1;
    this.counters.peerHitBytes += object.body.byteLength;
    return object;
  }

  private randomPeer(exclude: readonly string[]): string | undefined {
    const candidates = this.membership.livePeers().filter((peer) => !exclude.includes(peer));
    return candidates.length === 0 ? undefined : candidates[Math.floor(this.random() * candidates.length)];
  }

  /** Sends a copy in the background, at most `maxPushesInFlight` at once (the rest are skipped, counted). */
  private pushLater(peer: string, object: CacheObject, reason: PushReason, recirculation: number): void {
    if (this.pushesInFlight >= this.options.maxPushesInFlight) {
      this.counters.pushesSkipped += 1;
      return;
    }
    this.pushesInFlight += 1;
    this.client
      .push(peer, object, reason, recirculation)
      .catch((error: unknown) => {
        this.counters.peerErrors += 1;
        this.options.log.debug({ peer, path: object.path, reason, err: error }, 'webpp cache push failed');
      })
      .finally(() => {
        this.pushesInFlight -= 1;
      });
  }
}
