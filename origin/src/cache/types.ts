/**
 * The memory cache's vocabulary (issue 15): what an entry holds, where it came from, and the
 * hooks through which the cluster layer (cache/cluster/, cooperative caching after GOS)
 * plugs into one server's cache — counts, cooperative misses, second chances, invalidations.
 */

/**
 * A response held in memory: what the file, the app's route or the upstream produced, before
 * webpp's own response plugins (bindings header, script injection, CORS) ran. Those run again
 * on every hit, so a cached page gets the bindings of the directory as it is now.
 */
export interface CachedResponse {
  /** Lower-case header names; no hop-by-hop, per-request or CORS headers (stored-headers.ts). */
  headers: Record<string, string>;
  body: Buffer;
}

/** Where an entry came from. */
export type CacheSource = 'static' | 'route' | 'proxy' | 'api' | 'peer';

export interface CacheEntry {
  /** Path and query of the request URL (cache-key.ts). */
  readonly key: string;
  readonly response: CachedResponse;
  /** Body plus an estimate of the headers and bookkeeping: what the byte bound counts. */
  readonly sizeBytes: number;
  readonly storedAtMs: number;
  /** After this the entry is not served (Infinity: until invalidated or evicted). */
  readonly expiresAtMs: number;
  /** Seconds of age the response already had when stored (an upstream's Age header). */
  readonly initialAgeS: number;
  readonly source: CacheSource;
  /** Hits served from this entry on this server. */
  hits: number;
  /** Logical time of the last access, for LRU (policies.ts). */
  lastAccessTick: number;
  /** Times this copy was forwarded as an evicted singlet (GOS "N-chance", second chance). */
  recirculations: number;
}

/** What a caller asks the cache to hold (the cache fills in the bookkeeping). */
export interface CacheEntryInput {
  key: string;
  response: CachedResponse;
  source: CacheSource;
  /** Lifetime from now; undefined = until invalidated or evicted. */
  ttlMs: number | undefined;
  initialAgeS?: number;
  recirculations?: number;
}

/**
 * Access counts that replacement ranks entries by. The default counts this server's own
 * accesses with aging (access-counts.ts); the cluster layer substitutes GOS's approximated
 * global access counts (AGAC), reported to and returned by each object's home server.
 */
export interface AccessCounts {
  /** One access (a hit or a miss) of `key` on this server. */
  record(key: string, nowMs: number): void;
  /** The (aged) count replacement ranks `key` by. */
  count(key: string, nowMs: number): number;
  /** `key` was invalidated: its count may be dropped. */
  forget(key: string): void;
}

/** What an invalidation names: one path (with any query), or every key under a prefix. */
export type InvalidationTarget = { path: string } | { prefix: string };

/** Why an entry left the cache. */
export type RemovalReason = 'evicted' | 'invalidated' | 'expired' | 'replaced';

/**
 * The hooks the cluster layer sets (MemoryCacheApi.setHooks). Each is optional; without
 * them the cache is one server's own.
 */
export interface CacheClusterHooks {
  /**
   * A local miss of a cacheable request: a peer's memory may answer before the disk or the
   * upstream (GOS cooperative miss; the IBM paper's "array hit"). Resolve undefined to go on
   * to the route. Called with the cache key; must settle within the peer timeout.
   */
  peerLookup?: (key: string) => Promise<PeerCopy | undefined>;
  /**
   * An entry was evicted to make room (not invalidated or expired): the GOS second chance
   * forwards singlets to a random peer. Called synchronously; do the sending in the background.
   */
  onEvict?: (entry: CacheEntry) => void;
  /**
   * An invalidation through the API (in-process or HTTP). MemoryCacheApi.invalidate resolves
   * after this does, so the cluster layer can remove every copy before the call is acknowledged.
   * Invalidations received from peers go to MemoryCache.invalidate directly (no echo).
   */
  onInvalidate?: (target: InvalidationTarget) => Promise<void>;
  /**
   * Placement (added by cache-coop): whether this server keeps a copy it just got, from a
   * peer (`peer`) or from the disk, the app or the upstream (`fill`). False: not stored here
   * (the cluster layer sends a fill to the object's home server instead). Absent: keep.
   */
  place?: (key: string, copy: PeerCopy, origin: 'peer' | 'fill') => boolean;
}

/** A copy a peer answered a cooperative miss with. */
export interface PeerCopy {
  response: CachedResponse;
  /** Remaining lifetime at the peer; undefined = until invalidated. */
  ttlMs: number | undefined;
  initialAgeS?: number;
}

/** One server's cache figures (stats JSON `memoryCache`, /metrics `webpp_memory_cache_*`). */
export interface MemoryCacheCounters {
  /** Requests answered from this server's memory. */
  localHits: number;
  /** Cacheable requests answered from a peer's memory (member miss, array hit). */
  peerHits: number;
  /** Cacheable requests that went to the disk, the app or the upstream (array miss). */
  misses: number;
  /** Body bytes answered from memory (local and peer hits; HEAD and 304 count 0). */
  bytesServed: number;
  /** Entries removed to make room. */
  evictions: number;
  /** Entries stored. */
  stores: number;
  /** Entries not admitted (too large, or colder than everything they would displace). */
  rejections: number;
  /** Entries removed by invalidation. */
  invalidations: number;
  /** Entries dropped because their lifetime ran out. */
  expirations: number;
  /** Misses that waited for a concurrent miss of the same key instead of asking again (single flight). */
  coalesced: number;
  /** Expired proxy entries the upstream confirmed with a 304 (body kept, not fetched again). */
  revalidations: number;
}
