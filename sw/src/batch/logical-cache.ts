/**
 * The worker's cache keyed by LOGICAL URL (Web++ paper, Section 3.5: "a local browser cache
 * that matches resources based on their logical URL as opposed to physical URL matching").
 * A resource fetched from any replica is found again under its logical URL, whichever
 * replica serves it next time.
 *
 * Bodies live in Cache Storage; a small index (validator, freshness, size, last use) lives
 * in memory for synchronous decisions on the hot path and is written to IndexedDB off it.
 * Correctness rules:
 *  - HTTP caching (RFC 9111) decides freshness: Cache-Control max-age / no-cache / no-store,
 *    Expires, Age, the Last-Modified heuristic (@webpp/core freshness.ts);
 *  - an entry whose validator differs from the one the bindings announce is stale at once;
 *  - a batch manifest that confirms an entry's validator revalidates it (like a 304);
 *  - the cache is bounded in bytes and entries, least recently used evicted first.
 */
import {
  encodeCacheDigest,
  freshnessLifetimeMs,
  parseCacheControl,
  storability,
  validatorOf,
  type CacheDigestEntry,
  type HeaderLookup,
} from '@webpp/core';
import { DebouncedTask } from '../_private/debounced-task.js';
import type { KeyValueStore } from '../storage.js';
import { stripHash } from '../_private/strip-hash.js';

/** The part of the Cache interface this module uses (Cache Storage in the worker). */
export interface CacheLike {
  match(request: string, options?: CacheQueryOptions): Promise<Response | undefined>;
  put(request: string, response: Response): Promise<void>;
  delete(request: string, options?: CacheQueryOptions): Promise<boolean>;
  keys(): Promise<ReadonlyArray<{ url: string }>>;
}

/** Storage key of the index in the worker's key-value store. */
export const LOGICAL_CACHE_INDEX_KEY = 'batch-cache-index';

export interface LogicalCacheOptions {
  openCache: () => Promise<CacheLike>;
  storage: KeyValueStore;
  maxBytes: number;
  maxEntries: number;
  /** How long a validator confirmed by a batch manifest counts as a fresh revalidation. */
  validatedWindowMs: number;
  digestMaxBytes: number;
  digestFalsePositiveLog2: number;
  flushDelayMs: number;
  now: () => number;
  /** Storage key of the index; default LOGICAL_CACHE_INDEX_KEY (another instance, e.g. offline-cache.ts, uses its own). */
  indexKey?: string;
}

interface IndexEntry {
  url: string;
  validator: string | undefined;
  storedAtMs: number;
  /** storedAtMs + freshness lifetime - Age at storing: fresh before this instant. */
  freshUntilMs: number;
  /** Cache-Control: no-cache — always revalidate. */
  noCache: boolean;
  bytes: number;
  lastUsedMs: number;
  /** When a batch manifest last confirmed the validator (0: never). */
  validatedAtMs: number;
}

interface StoredIndex {
  formatVersion: 1;
  entries: IndexEntry[];
}

export type CacheDecision =
  /** Usable without asking any server. */
  | { kind: 'fresh' }
  /** Held, but must be revalidated (conditional request with its validator). */
  | { kind: 'stale'; validator: string | undefined; reason: 'expired' | 'no-cache' | 'new-validator' }
  | { kind: 'absent' };

export interface LogicalCacheStats {
  entries: number;
  bytes: number;
  hits: number;
  stores: number;
  evictions: number;
  revalidated: number;
}

function ageSeconds(headers: HeaderLookup): number {
  const age = headers.get('age')?.trim();
  return age !== undefined && /^\d+$/.test(age) ? Number(age) : 0;
}

function isIndexEntry(value: unknown): value is IndexEntry {
  if (typeof value !== 'object' || value === null) return false;
  const entry = value as Record<string, unknown>;
  return (
    typeof entry.url === 'string' &&
    (entry.validator === undefined || typeof entry.validator === 'string') &&
    ['storedAtMs', 'freshUntilMs', 'bytes', 'lastUsedMs', 'validatedAtMs'].every((key) => Number.isFinite(entry[key])) &&
    typeof entry.noCache === 'boolean'
  );
}

export class LogicalCache {
  private readonly entries = new Map<string, IndexEntry>();
  private totalBytes = 0;
  private readonly writer: DebouncedTask;
  private cachePromise: Promise<CacheLike> | undefined;
  readonly stats: LogicalCacheStats = { entries: 0, bytes: 0, hits: 0, stores: 0, evictions: 0, revalidated: 0 };
  /** Resolves once the stored index is loaded and reconciled (never rejects). */
  readonly ready: Promise<void>;

  constructor(private readonly options: LogicalCacheOptions) {
    this.writer = new DebouncedTask(options.flushDelayMs, () => this.persist());
    this.ready = this.load();
  }

  private cache(): Promise<CacheLike> {
    this.cachePromise ??= this.options.openCache();
    return this.cachePromise;
  }

  /** When the held copy of `url` was stored, and its validator; undefined when not held. Synchronous. */
  entryInfo(url: string): { storedAtMs: number; validator: string | undefined } | undefined {
    const entry = this.entries.get(stripHash(url));
    return entry === undefined ? undefined : { storedAtMs: entry.storedAtMs, validator: entry.validator };
  }

  /** Counts a use of the held copy for LRU eviction, without reading it. */
  touch(url: string): void {
    const entry = this.entries.get(stripHash(url));
    if (entry === undefined) return;
    entry.lastUsedMs = this.options.now();
    void this.writer.schedule();
  }

  /** Whether the cache holds the logical URL. Synchronous. */
  has(url: string): boolean {
    return this.entries.has(stripHash(url));
  }

  get size(): number {
    return this.entries.size;
  }

  /**
   * What to do with a request for `url`. `boundValidator` is the validator the bindings
   * announce for it (paper Section 3.5's logical cache must not outlive a change the
   * directory already knows about).
   */
  decide(url: string, boundValidator?: string): CacheDecision {
    const entry = this.entries.get(stripHash(url));
    if (entry === undefined) return { kind: 'absent' };
    if (boundValidator !== undefined && entry.validator !== boundValidator) {
      return { kind: 'stale', validator: entry.validator, reason: 'new-validator' };
    }
    const now = this.options.now();
    if (entry.validatedAtMs > 0 && now - entry.validatedAtMs < this.options.validatedWindowMs) return { kind: 'fresh' };
    if (entry.noCache) return { kind: 'stale', validator: entry.validator, reason: 'no-cache' };
    if (now < entry.freshUntilMs) return { kind: 'fresh' };
    return { kind: 'stale', validator: entry.validator, reason: 'expired' };
  }

  /** The stored response, or undefined (and the entry is forgotten) if Cache Storage lost it. */
  async read(url: string): Promise<Response | undefined> {
    const key = stripHash(url);
    const entry = this.entries.get(key);
    if (entry === undefined) return undefined;
    const response = await (await this.cache()).match(key, { ignoreVary: true });
    if (response === undefined) {
      this.forget(key);
      return undefined;
    }
    entry.lastUsedMs = this.options.now();
    this.stats.hits += 1;
    void this.writer.schedule();
    return response;
  }

  /**
   * Stores a complete response under its logical URL if HTTP caching allows it. Returns
   * whether it was stored. Never throws (a full quota just means no caching). `validated`:
   * the response was just sent for the page being loaded (a batch part), so it serves that
   * page load (the validated window) even when its own freshness lifetime is zero.
   */
  async store(url: string, status: number, headers: Headers, body: Uint8Array, validated = false): Promise<boolean> {
    const key = stripHash(url);
    if (!storability(status, headers).storable) {
      // The server now forbids caching it: an older copy must not be served either.
      if (this.entries.has(key)) await this.remove(key);
      return false;
    }
    if (body.byteLength > this.options.maxBytes) return false;
    const now = this.options.now();
    const entry = this.entryFor(key, headers, body.byteLength, now);
    if (validated) entry.validatedAtMs = now;
    try {
      await (await this.cache()).put(key, new Response(body as Uint8Array<ArrayBuffer>, { status, headers }));
    } catch {
      return false;
    }
    this.setEntry(entry);
    this.stats.stores += 1;
    await this.evict();
    void this.writer.schedule();
    return true;
  }

  /**
   * A 304 answered a revalidation: RFC 9111 §4.3.4, the stored headers are updated with
   * those of the 304, and the entry is fresh again. Returns the updated stored response.
   */
  async refresh(url: string, notModified: Headers): Promise<Response | undefined> {
    const key = stripHash(url);
    const stored = await this.read(key);
    if (stored === undefined) return undefined;
    const headers = new Headers(stored.headers);
    notModified.forEach((value, name) => {
      if (name !== 'content-length' && name !== 'content-encoding' && name !== 'content-range') headers.set(name, value);
    });
    const body = new Uint8Array(await stored.arrayBuffer());
    this.stats.revalidated += 1;
    await this.store(key, stored.status, headers, body);
    return new Response(body, { status: stored.status, statusText: stored.statusText, headers });
  }

  /**
   * A batch manifest says the server holds `validator` for `url` and left it out because
   * our digest listed it. True when our entry has that very validator (a real hit, not a
   * digest false positive): it counts as revalidated now. An entry with another validator
   * is made stale, so that its next use revalidates it.
   */
  confirm(url: string, validator: string): boolean {
    const entry = this.entries.get(stripHash(url));
    if (entry === undefined) return false;
    if (entry.validator !== validator) {
      // The server holds another version (our digest matched by a false positive): however
      // fresh our copy looks, it must be revalidated before use.
      entry.freshUntilMs = 0;
      entry.validatedAtMs = 0;
      void this.writer.schedule();
      return false;
    }
    entry.validatedAtMs = this.options.now();
    this.stats.revalidated += 1;
    void this.writer.schedule();
    return true;
  }

  async remove(url: string): Promise<void> {
    const key = stripHash(url);
    this.forget(key);
    try {
      await (await this.cache()).delete(key, { ignoreVary: true });
    } catch {
      // Best effort: the index no longer lists it, so it is never served.
    }
    void this.writer.schedule();
  }

  /**
   * The cache digest header value: (logical URL, validator) of entries with a validator,
   * most recently used first, cut to the header budget (@webpp/core cache-digest.ts).
   */
  digest(): { value: string; included: number; dropped: number } {
    const held: CacheDigestEntry[] = [];
    for (const entry of [...this.entries.values()].sort((a, b) => b.lastUsedMs - a.lastUsedMs)) {
      if (entry.validator !== undefined) held.push({ url: entry.url, validator: entry.validator });
    }
    return encodeCacheDigest(held, {
      maxBytes: this.options.digestMaxBytes,
      falsePositiveLog2: this.options.digestFalsePositiveLog2,
    });
  }

  /** Writes the index now (tests, shutdown). */
  async flush(): Promise<void> {
    await this.writer.runNow();
  }

  snapshot(): LogicalCacheStats {
    return { ...this.stats, entries: this.entries.size, bytes: this.totalBytes };
  }

  // ------------------------------------------------------------------ internals

  private entryFor(url: string, headers: Headers, bytes: number, now: number): IndexEntry {
    const control = parseCacheControl(headers.get('cache-control'));
    return {
      url,
      validator: validatorOf(headers),
      storedAtMs: now,
      freshUntilMs: now + freshnessLifetimeMs(headers) - ageSeconds(headers) * 1000,
      noCache: control.noCache,
      bytes,
      lastUsedMs: now,
      validatedAtMs: 0,
    };
  }

  private setEntry(entry: IndexEntry): void {
    const previous = this.entries.get(entry.url);
    if (previous !== undefined) {
      this.totalBytes -= previous.bytes;
      this.entries.delete(entry.url);
    }
    this.entries.set(entry.url, entry);
    this.totalBytes += entry.bytes;
  }

  private forget(url: string): void {
    const entry = this.entries.get(url);
    if (entry === undefined) return;
    this.entries.delete(url);
    this.totalBytes -= entry.bytes;
  }

  /** Least recently used first, until both bounds hold. */
  private async evict(): Promise<void> {
    if (this.totalBytes <= this.options.maxBytes && this.entries.size <= this.options.maxEntries) return;
    const byAge = [...this.entries.values()].sort((a, b) => a.lastUsedMs - b.lastUsedMs);
    const victims: string[] = [];
    for (const entry of byAge) {
      if (this.totalBytes <= this.options.maxBytes && this.entries.size <= this.options.maxEntries) break;
      this.forget(entry.url);
      victims.push(entry.url);
    }
    this.stats.evictions += victims.length;
    const cache = await this.cache();
    await Promise.all(victims.map((url) => cache.delete(url, { ignoreVary: true }).catch(() => false)));
  }

  private async persist(): Promise<void> {
    const stored: StoredIndex = { formatVersion: 1, entries: [...this.entries.values()] };
    await this.options.storage.set(this.options.indexKey ?? LOGICAL_CACHE_INDEX_KEY, stored);
  }

  /**
   * Loads the index and reconciles it with Cache Storage: an index entry without a body is
   * dropped, a body without an index entry is deleted (e.g. after a crash between the two
   * writes), so the two never disagree for long.
   */
  private async load(): Promise<void> {
    try {
      const stored = (await this.options.storage.get(this.options.indexKey ?? LOGICAL_CACHE_INDEX_KEY)) as Partial<StoredIndex> | undefined;
      const cache = await this.cache();
      const keys = new Set((await cache.keys()).map((request) => request.url));
      const learnedMeanwhile = [...this.entries.values()];
      if (stored?.formatVersion === 1 && Array.isArray(stored.entries)) {
        for (const entry of stored.entries) {
          if (isIndexEntry(entry) && keys.has(entry.url) && !this.entries.has(entry.url)) this.setEntry(entry);
        }
      }
      for (const entry of learnedMeanwhile) this.setEntry(entry);
      await Promise.all(
        [...keys].filter((url) => !this.entries.has(url)).map((url) => cache.delete(url, { ignoreVary: true }).catch(() => false)),
      );
      await this.evict();
    } catch {
      // No Cache Storage or IndexedDB: the cache simply stays empty.
    }
  }
}
