/**
 * One server's hot object cache (GOS, Section 4: the "HOC"): responses held in memory under a
 * byte bound, replaced by a named policy (policies.ts) on access counts from an injectable
 * source (types.ts AccessCounts). Admission follows GOS: every referenced object is offered
 * to the cache, and it gets in only by displacing entries that rank no higher than itself
 * (for LRU that is always). Expired entries are never served and are the first to go.
 *
 * Eviction order: a binary heap (heap-js) of the entries by the priority they had when last
 * ranked. Counts change under the cache at any time (the cluster layer's global counts) and
 * LRU ticks on every hit, but between two agings priorities only grow, so a ranked priority
 * is a lower bound: the entry at the top is re-ranked when it is taken, and pushed back if
 * it grew (lazy re-ranking; aging halves every count, which keeps their order). O(log n) per
 * eviction, no sort of all entries per admission. Removed entries leave the heap lazily.
 *
 * Expired proxy entries with a validator stay (never served) until they are evicted or
 * revalidated (`stale`): a 304 from the upstream keeps the body (RFC 9111 Section 4.3).
 */
import { Heap } from 'heap-js';
import { replacementPolicy, type PolicyName, type ReplacementPolicy } from './policies.js';
import type { AccessCounts, CacheEntry, CacheEntryInput, InvalidationTarget, MemoryCacheCounters, RemovalReason } from './types.js';

/** Bookkeeping charged to every entry beside its body and headers. */
const ENTRY_OVERHEAD_BYTES = 256;

export interface MemoryCacheOptions {
  /** Byte bound of all entries together. */
  maxBytes: number;
  /** Largest body held. */
  maxEntryBytes: number;
  policy: PolicyName;
  counts: AccessCounts;
  clock?: () => number;
}

/** An entry in the eviction heap, with the priority it was ranked at. */
interface Ranked {
  entry: CacheEntry;
  priority: number;
  tick: number;
}

function compareRanked(a: Ranked, b: Ranked): number {
  if (a.priority < b.priority) return -1;
  if (a.priority > b.priority) return 1;
  return a.tick - b.tick;
}

/** An expired entry worth keeping: a proxy response with a validator, revalidated with a conditional request. */
function revalidatable(entry: CacheEntry): boolean {
  return entry.source === 'proxy' && (entry.response.headers.etag !== undefined || entry.response.headers['last-modified'] !== undefined);
}

export type RemovalListener = (entry: CacheEntry, reason: RemovalReason) => void;

function entrySizeBytes(input: CacheEntryInput): number {
  let headerChars = input.key.length;
  for (const [name, value] of Object.entries(input.response.headers)) headerChars += name.length + value.length;
  return input.response.body.byteLength + 2 * headerChars + ENTRY_OVERHEAD_BYTES;
}

export function matchesTarget(key: string, target: InvalidationTarget): boolean {
  if ('prefix' in target) return key.startsWith(target.prefix);
  return key === target.path || key.startsWith(`${target.path}?`);
}

/** Every counter at 0: a new cache's, and what a server without a cache reports. */
export function zeroCounters(): MemoryCacheCounters {
  return { localHits: 0, peerHits: 0, misses: 0, bytesServed: 0, evictions: 0, stores: 0, rejections: 0, invalidations: 0, expirations: 0, coalesced: 0, revalidations: 0 };
}

export class MemoryCache {
  readonly counters: MemoryCacheCounters = zeroCounters();

  private readonly entries = new Map<string, CacheEntry>();
  private readonly order = new Heap<Ranked>(compareRanked);
  private readonly removalListeners: RemovalListener[] = [];
  private readonly clock: () => number;
  private policy: ReplacementPolicy;
  private counts: AccessCounts;
  private bytes = 0;
  private tick = 0;

  constructor(private readonly options: MemoryCacheOptions) {
    this.clock = options.clock ?? Date.now;
    this.policy = replacementPolicy(options.policy);
    this.counts = options.counts;
  }

  get policyName(): PolicyName {
    return this.policy.name;
  }

  get maxBytes(): number {
    return this.options.maxBytes;
  }

  /** The largest body it holds. */
  get maxEntryBytes(): number {
    return this.options.maxEntryBytes;
  }

  /** Bytes held (what the bound counts). */
  get sizeBytes(): number {
    return this.bytes;
  }

  get size(): number {
    return this.entries.size;
  }

  /** The count source replacement ranks by; the cluster layer substitutes global counts. */
  get accessCounts(): AccessCounts {
    return this.counts;
  }

  setAccessCounts(counts: AccessCounts): void {
    this.counts = counts;
  }

  /** Called for every entry that leaves, with why (evictions: the GOS second chance). */
  onRemove(listener: RemovalListener): void {
    this.removalListeners.push(listener);
  }

  /** The aged access count replacement ranks `key` by now. */
  countOf(key: string): number {
    return this.counts.count(key, this.clock());
  }

  /** Counts one access of `key` (hit or miss): GOS counts every reference. */
  recordAccess(key: string): void {
    this.counts.record(key, this.clock());
  }

  /** A fresh entry, touched for LRU; an expired one is dropped. Does not count an access. */
  get(key: string): CacheEntry | undefined {
    const entry = this.peek(key);
    if (entry !== undefined) entry.lastAccessTick = ++this.tick;
    return entry;
  }

  /** A fresh entry, without touching it. */
  peek(key: string): CacheEntry | undefined {
    const entry = this.entries.get(key);
    if (entry === undefined) return undefined;
    if (entry.expiresAtMs <= this.clock()) {
      if (!revalidatable(entry)) this.remove(entry, 'expired');
      return undefined;
    }
    return entry;
  }

  /** An expired entry kept for revalidation (a proxy response with a validator). */
  stale(key: string): CacheEntry | undefined {
    const entry = this.entries.get(key);
    return entry !== undefined && entry.expiresAtMs <= this.clock() && revalidatable(entry) ? entry : undefined;
  }

  /** Remaining lifetime of an entry (undefined: no lifetime). */
  ttlMsOf(entry: CacheEntry): number | undefined {
    return Number.isFinite(entry.expiresAtMs) ? Math.max(0, entry.expiresAtMs - this.clock()) : undefined;
  }

  /**
   * Offers a response to the cache. Returns the stored entry, or undefined when it was not
   * admitted: too large, no lifetime left, or colder than what it would displace.
   */
  store(input: CacheEntryInput): CacheEntry | undefined {
    const sizeBytes = entrySizeBytes(input);
    const nowMs = this.clock();
    if (input.response.body.byteLength > this.options.maxEntryBytes || sizeBytes > this.options.maxBytes || (input.ttlMs !== undefined && input.ttlMs <= 0)) {
      this.counters.rejections += 1;
      return undefined;
    }
    const previous = this.entries.get(input.key);
    if (previous !== undefined) this.remove(previous, 'replaced');
    const tick = ++this.tick;
    const victims = this.victimsFor(sizeBytes, { sizeBytes, count: this.counts.count(input.key, nowMs), lastAccessTick: tick }, nowMs);
    if (victims === undefined) {
      this.counters.rejections += 1;
      return undefined;
    }
    for (const victim of victims) this.remove(victim, victim.expiresAtMs <= nowMs ? 'expired' : 'evicted');
    const entry: CacheEntry = {
      key: input.key,
      response: input.response,
      sizeBytes,
      storedAtMs: nowMs,
      expiresAtMs: input.ttlMs === undefined ? Number.POSITIVE_INFINITY : nowMs + input.ttlMs,
      initialAgeS: input.initialAgeS ?? 0,
      source: input.source,
      hits: 0,
      lastAccessTick: tick,
      recirculations: input.recirculations ?? 0,
    };
    this.entries.set(entry.key, entry);
    this.rank(entry, nowMs);
    this.bytes += sizeBytes;
    this.counters.stores += 1;
    return entry;
  }

  /** Removes the entries a target names, here only; returns how many. */
  invalidate(target: InvalidationTarget): number {
    let removed = 0;
    for (const entry of [...this.entries.values()]) {
      if (!matchesTarget(entry.key, target)) continue;
      this.remove(entry, 'invalidated');
      this.counts.forget(entry.key);
      removed += 1;
    }
    return removed;
  }

  /** Every entry, fresh or not, in no particular order. */
  values(): IterableIterator<CacheEntry> {
    return this.entries.values();
  }

  clear(): void {
    for (const entry of [...this.entries.values()]) this.remove(entry, 'invalidated');
  }

  /**
   * The entries to evict so that `sizeBytes` more fit, lowest priority first (expired ones
   * before all), or undefined when one of them ranks higher than the newcomer.
   */
  private victimsFor(sizeBytes: number, newcomer: { sizeBytes: number; count: number; lastAccessTick: number }, nowMs: number): CacheEntry[] | undefined {
    let needBytes = this.bytes + sizeBytes - this.options.maxBytes;
    if (needBytes <= 0) return [];
    const newcomerPriority = this.policy.priority(newcomer);
    const taken: Ranked[] = [];
    const victims: CacheEntry[] = [];
    while (needBytes > 0) {
      const top = this.order.pop();
      if (top === undefined) break;
      if (this.entries.get(top.entry.key) !== top.entry) continue; // removed since it was ranked
      const priority = this.priorityOf(top.entry, nowMs);
      if (priority > top.priority) {
        this.order.push({ entry: top.entry, priority, tick: top.entry.lastAccessTick }); // grew: re-ranked
        continue;
      }
      taken.push(top);
      if (priority > newcomerPriority) break;
      victims.push(top.entry);
      needBytes -= top.entry.sizeBytes;
    }
    if (needBytes <= 0) return victims;
    for (const ranked of taken) this.order.push(ranked); // not admitted: nothing leaves
    return undefined;
  }

  private priorityOf(entry: CacheEntry, nowMs: number): number {
    if (entry.expiresAtMs <= nowMs) return Number.NEGATIVE_INFINITY;
    return this.policy.priority({ sizeBytes: entry.sizeBytes, count: this.counts.count(entry.key, nowMs), lastAccessTick: entry.lastAccessTick });
  }

  private rank(entry: CacheEntry, nowMs: number): void {
    // Entries removed since they were ranked are dropped when popped; rebuild when they pile up.
    if (this.order.size() > 2 * this.entries.size + 64) {
      const live = [...this.entries.values()].map((held) => ({ entry: held, priority: this.priorityOf(held, nowMs), tick: held.lastAccessTick }));
      this.order.init(live.filter((ranked) => ranked.entry !== entry));
    }
    this.order.push({ entry, priority: this.priorityOf(entry, nowMs), tick: entry.lastAccessTick });
  }

  private remove(entry: CacheEntry, reason: RemovalReason): void {
    if (this.entries.get(entry.key) !== entry) return;
    this.entries.delete(entry.key);
    this.bytes -= entry.sizeBytes;
    if (reason === 'evicted') this.counters.evictions += 1;
    else if (reason === 'expired') this.counters.expirations += 1;
    else if (reason === 'invalidated') this.counters.invalidations += 1;
    for (const listener of this.removalListeners) listener(entry, reason);
  }
}
