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
 * - Concurrent misses for one key are merged (single-flight.ts): one request asks the peers
 *   or runs the route, the others wait for its response.
 * - An expired proxy entry with a validator is revalidated (revalidation.ts): the upstream
 *   gets a conditional request, and its 304 refreshes the entry and is answered with the
 *   body from memory (RFC 9111 Section 4.3).
 * - With content digests on, a copy of a static file (this server's, or a peer's) is served
 *   only while it holds the bytes the file holds now (`staticFileDigest`, the view the
 *   digests follow): an edited file is read again at once, instead of the old bytes being
 *   served under the new digest the bindings header announces (issue 25 §2).
 * Hits still run the onSend hooks registered after this plugin: the bindings header (from
 * the pre-processing cache, keyed by the validator), script injection, kill switch, CORS.
 * Requests with Range or Authorization never touch the cache.
 */
import fp from 'fastify-plugin';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { MemoryCacheApi } from './cache-api.js';
import { requestCacheKey } from './cache-key.js';
import { contentEtag, lifetimeOf, storedHeaders } from './freshness.js';
import type { MemoryCache } from './memory-cache.js';
import { conditionalHeadersFor, hasConditional, refreshedHeaders } from './revalidation.js';
import { serveEntry } from './serve-entry.js';
import { SingleFlight, type SharedResponse } from './single-flight.js';
import type { CacheEntry, CacheSource, CachedResponse } from './types.js';
import { bufferPayload, discardPayload } from '../http/payload.js';
import { bytesDigest } from '../bindings/file-digests.js';
import { pathStep } from '../compose/path-hooks.js';

/** A route's cache declaration: `true` (default lifetime) or a lifetime and/or source. */
export type RouteCacheConfig = true | { ttlMs?: number; source?: Extract<CacheSource, 'static' | 'route' | 'proxy'> };

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Declares the route's GET answers cacheable in the webpp memory cache. */
    webppCache?: RouteCacheConfig;
  }
  interface FastifyRequest {
    /** Set on a local miss of a cacheable route: the answer is offered to the cache on the way out. */
    webppCacheFill: CacheFill | null;
  }
}

/** A miss on its way to the route: what to store, whether it leads a flight, what it revalidates. */
interface CacheFill {
  key: string;
  source: CacheSource;
  ttlMs: number | undefined;
  /** This request leads the single flight of `key` (settles it on the way out). */
  leads: boolean;
  /** An expired entry revalidated by this request's conditional request upstream. */
  stale: CacheEntry | undefined;
}

/** Declares the request state of the memory cache; called once, before any route (plugin.ts). */
export function declareMemoryCacheRequest(app: FastifyInstance): void {
  app.decorateRequest('webppCacheFill', null);
}

/** A follower's wait for the leader: bounded, so a stuck upstream does not hold it forever. */
const MAX_FLIGHT_WAIT_MS = 30_000;

export interface MemoryCachePluginOptions {
  api: MemoryCacheApi;
  isOwnEndpoint: (url: string) => boolean;
  /** Lifetime of static files and of routes declared without one (memoryCacheTtlMs). */
  defaultTtlMs: number;
  maxEntryBytes: number;
  /**
   * The digest of the file the static route serves for a URL as it is now (undefined: no
   * file); given when a folder is served with content digests on. A static copy whose bytes
   * differ is not served.
   */
  staticFileDigest?: (url: string) => Promise<string | undefined>;
}

function declaration(request: FastifyRequest, defaultTtlMs: number): { source: CacheSource; ttlMs: number | undefined } | undefined {
  const config = (request.routeOptions.config as { webppCache?: RouteCacheConfig } | undefined)?.webppCache;
  if (config === undefined) return undefined;
  const { ttlMs, source = 'route' } = config === true ? {} : config;
  return { source, ttlMs: ttlMs ?? defaultTtlMs };
}

async function memoryCachePlugin(app: FastifyInstance, options: MemoryCachePluginOptions): Promise<void> {
  const local: MemoryCache | undefined = options.api.local;
  if (local === undefined) return;
  const cache: MemoryCache = local;
  const { api, isOwnEndpoint, defaultTtlMs, maxEntryBytes, staticFileDigest } = options;
  const flights = new SingleFlight(MAX_FLIGHT_WAIT_MS);
  /** Digests of the bodies held, computed once per body. */
  const bodyDigests = new WeakMap<Buffer, string>();
  /**
   * Whether a copy (this server's fill of a static file, or a peer's) may answer a request
   * for a static file: not when the file now holds other bytes. Without a file (none, too
   * large, being written) no digest is announced, and the copy answers as before.
   */
  const holdsFileAsItIs = async (url: string, declared: { source: CacheSource } | undefined, source: CacheSource, response: CachedResponse): Promise<boolean> => {
    if (staticFileDigest === undefined || declared?.source !== 'static' || (source !== 'static' && source !== 'peer')) return true;
    const current = await staticFileDigest(url).catch(() => undefined);
    if (current === undefined) return true;
    let held = bodyDigests.get(response.body);
    if (held === undefined) {
      held = bytesDigest(response.body);
      bodyDigests.set(response.body, held);
    }
    return current === held;
  };
  const answerFromMemory = (request: FastifyRequest, reply: FastifyReply, key: string, shared: SharedResponse): FastifyReply => {
    const answer: CacheEntry = { key, response: shared.response, sizeBytes: 0, storedAtMs: Date.now(), expiresAtMs: Infinity, initialAgeS: shared.initialAgeS, source: 'peer', hits: 0, lastAccessTick: 0, recirculations: 0 };
    cache.counters.bytesServed += serveEntry(request, reply, answer, Date.now());
    return reply;
  };

  const step = pathStep(app, 'webpp-memory-cache');
  step.addHook('onRequest', async (request, reply) => {
    if (request.method !== 'GET' && request.method !== 'HEAD') return;
    if (request.headers.range !== undefined || request.headers.authorization !== undefined || isOwnEndpoint(request.url)) return;
    const key = requestCacheKey(request.url);
    if (key === undefined) return;
    const declared = declaration(request, defaultTtlMs);
    const held = cache.get(key);
    // An edited file is read again (its fill replaces the old copy).
    const entry = held !== undefined && (await holdsFileAsItIs(request.url, declared, held.source, held.response)) ? held : undefined;
    if (entry === undefined && declared === undefined) return;
    cache.recordAccess(key);
    if (entry !== undefined) {
      entry.hits += 1;
      cache.counters.localHits += 1;
      cache.counters.bytesServed += serveEntry(request, reply, entry, Date.now());
      return reply;
    }
    if (declared === undefined) return undefined; // put through the API only: the route answers
    const waiting = flights.join(key);
    if (waiting !== undefined) {
      const shared = await waiting;
      if (shared !== undefined) {
        cache.counters.coalesced += 1;
        return answerFromMemory(request, reply, key, shared);
      }
    } else {
      flights.lead(key);
    }
    const leads = waiting === undefined;
    const offered = leads ? await api.clusterHooks.peerLookup?.(key).catch(() => undefined) : undefined;
    const copy = offered !== undefined && (await holdsFileAsItIs(request.url, declared, 'peer', offered.response)) ? offered : undefined;
    if (copy !== undefined) {
      cache.counters.peerHits += 1;
      const shared = { response: copy.response, ttlMs: copy.ttlMs, initialAgeS: copy.initialAgeS ?? 0 };
      flights.settle(key, shared);
      const keep = api.clusterHooks.place?.(key, copy, 'peer') ?? true;
      if (keep) cache.store({ key, response: copy.response, source: 'peer', ttlMs: copy.ttlMs, initialAgeS: shared.initialAgeS });
      return answerFromMemory(request, reply, key, shared);
    }
    cache.counters.misses += 1;
    const stale = declared.source === 'proxy' && !hasConditional(request.headers) ? cache.stale(key) : undefined;
    if (stale !== undefined) Object.assign(request.raw.headers, conditionalHeadersFor(stale));
    request.webppCacheFill = { key, ...declared, leads, stale };
    return undefined;
  });

  // A leader whose response never reached onSend (an error, an aborted request) lets its followers go.
  const settleLeft = async (request: FastifyRequest): Promise<void> => {
    const fill = request.webppCacheFill;
    if (fill?.leads === true) flights.settle(fill.key, undefined);
  };
  step.addHook('onResponse', settleLeft);
  step.addHook('onRequestAbort', settleLeft);

  step.addHook('onSend', async (request, reply, payload) => {
    const fill = request.webppCacheFill;
    if (fill === null) return payload;
    request.webppCacheFill = null;
    const shared = await fillFrom(request, reply, fill, payload);
    if (fill.leads) flights.settle(fill.key, shared?.shared);
    return shared === undefined ? payload : shared.payload;
  });

  /** The response of a miss as the cache keeps it (stored if placement says so), or undefined when it is not kept. */
  async function fillFrom(request: FastifyRequest, reply: FastifyReply, fill: CacheFill, payload: unknown): Promise<{ shared: SharedResponse | undefined; payload: unknown } | undefined> {
    if (fill.stale !== undefined && reply.statusCode === 304) return revalidated(request, reply, fill, fill.stale, payload);
    const raw = reply.getHeaders();
    const lifetime = lifetimeOf(request, reply.statusCode, raw, fill.source, fill.ttlMs);
    if (lifetime === undefined) return undefined;
    const length = Number(raw['content-length'] ?? Number.NaN);
    if (length > maxEntryBytes) return undefined;
    const buffered = await bufferPayload(payload, maxEntryBytes);
    if (buffered === undefined) return undefined;
    if (!buffered.complete) return { shared: undefined, payload: buffered.stream };
    const headers = storedHeaders(raw);
    if (headers.etag === undefined) {
      headers.etag = contentEtag(buffered.body);
      reply.header('etag', headers.etag);
    }
    const shared = { response: { headers, body: buffered.body }, ttlMs: lifetime.ttlMs, initialAgeS: lifetime.initialAgeS };
    keep(fill, shared);
    return { shared, payload: buffered.body };
  }

  /** A 304 to a revalidation: the entry's body with the refreshed headers, answered as a 200 (or the client's own 304). */
  function revalidated(request: FastifyRequest, reply: FastifyReply, fill: CacheFill, stale: CacheEntry, payload: unknown): { shared: SharedResponse; payload: unknown } | undefined {
    discardPayload(payload);
    cache.counters.revalidations += 1;
    const headers = refreshedHeaders(stale.response.headers, reply.getHeaders());
    const lifetime = lifetimeOf(request, 200, headers, fill.source, fill.ttlMs);
    const response: CachedResponse = { headers, body: stale.response.body };
    const shared = { response, ttlMs: lifetime?.ttlMs ?? 0, initialAgeS: lifetime?.initialAgeS ?? 0 };
    if (lifetime !== undefined) keep(fill, shared);
    // Over the 304's headers: those set by earlier hooks (Server-Timing, CORS) stay.
    reply.code(200).headers(headers).header('content-length', String(response.body.byteLength));
    return { shared, payload: request.method === 'HEAD' ? '' : response.body };
  }

  function keep(fill: CacheFill, shared: SharedResponse): void {
    if (api.clusterHooks.place?.(fill.key, shared, 'fill') ?? true) {
      cache.store({ key: fill.key, response: shared.response, source: fill.source, ttlMs: shared.ttlMs, initialAgeS: shared.initialAgeS });
    }
  }
}

export const webppMemoryCache = fp(memoryCachePlugin, {
  fastify: '5.x',
  name: 'webpp-memory-cache',
  // Validators of injected pages must be stripped before they are compared with an entry's.
  dependencies: ['webpp-injected-etag'],
});
