/**
 * The memory cache on the response path, in all three modes (static files, the app's routes,
 * proxy). A route takes part when its config says so:
 *
 *   app.get('/scores', { config: { webppCache: { ttlMs: 30_000 } } }, handler);
 *
 * (startReplicaServer marks its static-file and proxy routes itself.) Then:
 * - onRequest: a fresh entry answers at once (a local hit), before the route runs; on a local
 *   miss the cluster hook may fetch a peer's copy (a peer hit, GOS cooperative miss), kept here
 *   too; otherwise the route runs (a miss: disk, app or upstream). Entries put through the API
 *   answer whatever the route's config.
 * - onSend, before the bindings header rewrites anything: a 200 of a missed request is
 *   buffered (up to memoryCacheMaxEntryBytes) and offered to the cache (freshness.ts).
 * Hits still run the onSend hooks registered after this plugin: the bindings header (from
 * the pre-processing cache, keyed by the validator), script injection, kill switch, CORS.
 * Requests with Range or Authorization never touch the cache.
 */
import fp from 'fastify-plugin';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { MemoryCacheApi } from './cache-api.js';
import { requestCacheKey } from './cache-key.js';
import { contentEtag, lifetimeOf, storedHeaders } from './freshness.js';
import type { MemoryCache } from './memory-cache.js';
import { serveEntry } from './serve-entry.js';
import type { CacheSource } from './types.js';
import { bufferPayload } from '../http/payload.js';

/** A route's cache declaration: `true` (default lifetime) or a lifetime and/or source. */
export type RouteCacheConfig = true | { ttlMs?: number; source?: Extract<CacheSource, 'static' | 'route' | 'proxy'> };

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Declares the route's GET answers cacheable in the webpp memory cache. */
    webppCache?: RouteCacheConfig;
  }
  interface FastifyRequest {
    /** Set on a local miss of a cacheable route: the answer is offered to the cache on the way out. */
    webppCacheFill: { key: string; source: CacheSource; ttlMs: number | undefined } | null;
  }
}

export interface MemoryCachePluginOptions {
  api: MemoryCacheApi;
  isOwnEndpoint: (url: string) => boolean;
  /** Lifetime of static files and of routes declared without one (memoryCacheTtlMs). */
  defaultTtlMs: number;
  maxEntryBytes: number;
}

function declaration(request: FastifyRequest, defaultTtlMs: number): { source: CacheSource; ttlMs: number | undefined } | undefined {
  const config = (request.routeOptions.config as { webppCache?: RouteCacheConfig } | undefined)?.webppCache;
  if (config === undefined) return undefined;
  const { ttlMs, source = 'route' } = config === true ? {} : config;
  return { source, ttlMs: ttlMs ?? defaultTtlMs };
}

async function memoryCachePlugin(app: FastifyInstance, options: MemoryCachePluginOptions): Promise<void> {
  app.decorateRequest('webppCacheFill', null);
  const cache: MemoryCache | undefined = options.api.local;
  if (cache === undefined) return;
  const { api, isOwnEndpoint, defaultTtlMs, maxEntryBytes } = options;

  app.addHook('onRequest', async (request, reply) => {
    if (request.method !== 'GET' && request.method !== 'HEAD') return;
    if (request.headers.range !== undefined || request.headers.authorization !== undefined || isOwnEndpoint(request.url)) return;
    const key = requestCacheKey(request.url);
    if (key === undefined) return;
    const declared = declaration(request, defaultTtlMs);
    const entry = cache.get(key);
    if (entry === undefined && declared === undefined) return;
    cache.recordAccess(key);
    if (entry !== undefined) {
      entry.hits += 1;
      cache.counters.localHits += 1;
      cache.counters.bytesServed += serveEntry(request, reply, entry, Date.now());
      return reply;
    }
    const copy = await api.clusterHooks.peerLookup?.(key).catch(() => undefined);
    if (copy !== undefined) {
      cache.counters.peerHits += 1;
      const keep = api.clusterHooks.place?.(key, copy, 'peer') ?? true;
      const stored = keep ? cache.store({ key, response: copy.response, source: 'peer', ttlMs: copy.ttlMs, initialAgeS: copy.initialAgeS ?? 0 }) : undefined;
      const answer = stored ?? { key, response: copy.response, sizeBytes: 0, storedAtMs: Date.now(), expiresAtMs: Infinity, initialAgeS: copy.initialAgeS ?? 0, source: 'peer' as const, hits: 0, lastAccessTick: 0, recirculations: 0 };
      cache.counters.bytesServed += serveEntry(request, reply, answer, Date.now());
      return reply;
    }
    cache.counters.misses += 1;
    if (declared !== undefined) request.webppCacheFill = { key, ...declared };
    return undefined;
  });

  app.addHook('onSend', async (request, reply, payload) => {
    // Requests of routes in contexts made before this plugin decorated the request (the push
    // plugin's peer exchange) have no webppCacheFill at all: undefined, not null.
    const fill = request.webppCacheFill as typeof request.webppCacheFill | undefined;
    if (fill === null || fill === undefined) return payload;
    request.webppCacheFill = null;
    const raw = reply.getHeaders();
    const lifetime = lifetimeOf(request, reply.statusCode, raw, fill.source, fill.ttlMs);
    if (lifetime === undefined) return payload;
    const length = Number(raw['content-length'] ?? Number.NaN);
    if (length > maxEntryBytes) return payload;
    const buffered = await bufferPayload(payload, maxEntryBytes);
    if (buffered === undefined) return payload;
    if (!buffered.complete) return buffered.stream;
    const headers = storedHeaders(raw);
    if (headers.etag === undefined) {
      headers.etag = contentEtag(buffered.body);
      reply.header('etag', headers.etag);
    }
    const response = { headers, body: buffered.body };
    if (api.clusterHooks.place?.(fill.key, { response, ttlMs: lifetime.ttlMs, initialAgeS: lifetime.initialAgeS }, 'fill') ?? true) {
      cache.store({ key: fill.key, response, source: fill.source, ttlMs: lifetime.ttlMs, initialAgeS: lifetime.initialAgeS });
    }
    return buffered.body;
  });
}

export const webppMemoryCache = fp(memoryCachePlugin, {
  fastify: '5.x',
  name: 'webpp-memory-cache',
  // Validators of injected pages must be stripped before they are compared with an entry's.
  dependencies: ['webpp-injected-etag'],
});
