/**
 * The explicit cache API (IBM accelerator, Song et al., Section 2: "API functions allow
 * application programs to cache, invalidate, query, and specify lifetimes for the contents
 * of URLs"), as `fastify.webpp.cache`:
 *
 *   app.webpp.cache.put('/scores', html, { ttlMs: 30_000, contentType: 'text/html' });
 *   await app.webpp.cache.invalidate('/scores');            // one path, with any query
 *   await app.webpp.cache.invalidate({ prefix: '/news/' });  // every key under a prefix
 *   app.webpp.cache.query('/scores');                        // what is held, or undefined
 *
 * With the cache off (memoryCacheBytes 0) put stores nothing, invalidate removes nothing
 * and query finds nothing. The HTTP endpoints (routes/cache.ts) call the same methods.
 */
import { zeroCounters, type MemoryCache } from './memory-cache.js';
import { apiCacheKey, apiCachePrefix } from './cache-key.js';
import { contentEtag } from './freshness.js';
import { WEBPP_ERR_BAD_PATH } from '../errors.js';
import type { CacheClusterHooks, CacheEntry, CacheSource, InvalidationTarget, MemoryCacheCounters } from './types.js';
import type { PolicyName } from './policies.js';

export interface CachePutOptions {
  /** Lifetime; omitted = until invalidated or evicted. */
  ttlMs?: number;
  /** Content-Type of the body (default `application/octet-stream`). */
  contentType?: string;
  /** More headers to answer with (Cache-Control, Last-Modified, …). An ETag is made from the body unless given. */
  headers?: Record<string, string>;
}

/** What `query` and `put` tell about an entry. */
export interface CacheEntryInfo {
  key: string;
  source: CacheSource;
  etag: string | undefined;
  contentType: string | undefined;
  bodyBytes: number;
  sizeBytes: number;
  storedAtMs: number;
  /** null: until invalidated or evicted. */
  expiresAtMs: number | null;
  hits: number;
  /** The aged access count replacement ranks it by. */
  accessCount: number;
}

export interface MemoryCacheSummary extends MemoryCacheCounters {
  enabled: boolean;
  policy: PolicyName | null;
  maxBytes: number;
  sizeBytes: number;
  entries: number;
}

export class MemoryCacheApi {
  private hooks: CacheClusterHooks = {};

  private cache: MemoryCache | undefined;

  /**
   * `local` undefined: the cache is off until `attach` (the memory-cache feature,
   * features/memory-cache.ts). `reservedReason` names why a path cannot be put (the paths
   * webpp answers itself, which never reach the cache).
   */
  constructor(
    local: MemoryCache | undefined,
    private readonly reservedReason: (path: string) => string | undefined = () => undefined,
  ) {
    if (local !== undefined) this.attach(local);
  }

  /** Turns the cache on with `local` (once). */
  attach(local: MemoryCache): void {
    if (this.cache !== undefined) throw new TypeError('the memory cache is already attached');
    this.cache = local;
    local.onRemove((entry, reason) => {
      if (reason === 'evicted') this.hooks.onEvict?.(entry);
    });
  }

  /** This server's cache; undefined while it is off. */
  get local(): MemoryCache | undefined {
    return this.cache;
  }

  get enabled(): boolean {
    return this.local !== undefined;
  }

  /** The cluster layer's hooks (cache/cluster/): cooperative misses, second chances, invalidations. */
  setHooks(hooks: CacheClusterHooks): void {
    this.hooks = hooks;
  }

  get clusterHooks(): Readonly<CacheClusterHooks> {
    return this.hooks;
  }

  /** Holds `body` as the answer to GET `path`; undefined when the cache is off or did not admit it. */
  put(path: string, body: string | Buffer, options: CachePutOptions = {}): CacheEntryInfo | undefined {
    const key = apiCacheKey(path);
    const reserved = this.reservedReason(key.split('?', 1)[0] ?? key);
    if (reserved !== undefined) throw new WEBPP_ERR_BAD_PATH(JSON.stringify(key.slice(0, 200)), reserved);
    if (this.local === undefined) return undefined;
    const bytes = typeof body === 'string' ? Buffer.from(body) : body;
    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries(options.headers ?? {})) headers[name.toLowerCase()] = value;
    headers['content-type'] = options.contentType ?? headers['content-type'] ?? 'application/octet-stream';
    headers.etag ??= contentEtag(bytes);
    this.local.recordAccess(key);
    const entry = this.local.store({ key, response: { headers, body: bytes }, source: 'api', ttlMs: options.ttlMs });
    if (entry === undefined) return undefined;
    // Cluster-wide like any fill: the copy also goes to the path's home server (IBM's owner),
    // so a miss on any other server finds it there (GOS's global object space).
    this.hooks.place?.(key, { response: entry.response, ttlMs: options.ttlMs }, 'fill');
    return this.describe(entry);
  }

  /**
   * Removes a path (with any query) or every key under `{ prefix }` from this server's memory
   * and, through the cluster hook, from every server's, before it resolves. Resolves with the
   * number of entries removed here.
   */
  async invalidate(target: string | { prefix: string }): Promise<number> {
    const checked: InvalidationTarget = typeof target === 'string' ? { path: apiCacheKey(target) } : { prefix: apiCachePrefix(target.prefix) };
    const removed = this.local?.invalidate(checked) ?? 0;
    if (this.local !== undefined) await this.hooks.onInvalidate?.(checked);
    return removed;
  }

  query(path: string): CacheEntryInfo | undefined {
    const entry = this.local?.peek(apiCacheKey(path));
    return entry === undefined ? undefined : this.describe(entry);
  }

  summary(): MemoryCacheSummary {
    const cache = this.local;
    return {
      enabled: cache !== undefined,
      policy: cache?.policyName ?? null,
      maxBytes: cache?.maxBytes ?? 0,
      sizeBytes: cache?.sizeBytes ?? 0,
      entries: cache?.size ?? 0,
      ...(cache?.counters ?? zeroCounters()),
    };
  }

  private describe(entry: CacheEntry): CacheEntryInfo {
    return {
      key: entry.key,
      source: entry.source,
      etag: entry.response.headers.etag,
      contentType: entry.response.headers['content-type'],
      bodyBytes: entry.response.body.byteLength,
      sizeBytes: entry.sizeBytes,
      storedAtMs: entry.storedAtMs,
      expiresAtMs: Number.isFinite(entry.expiresAtMs) ? entry.expiresAtMs : null,
      hits: entry.hits,
      accessCount: this.local?.countOf(entry.key) ?? 0,
    };
  }
}
