/**
 * The worker half of batch transmission (Web++ paper, Section 3.4) and of the logical-URL
 * cache (Section 3.5):
 *  - a navigation to a page asks for a batch (Accept + cache digest), through the normal
 *    replica path, and the page is handed to the browser as soon as its part has arrived;
 *  - the browser's requests for the page's embedded resources are answered from the batch
 *    (waiting for parts still streaming in) or from the logical-URL cache;
 *  - anything that goes wrong (an origin without batching, a cut stream, a corrupt or
 *    missing part, a timeout) sends the request the normal way, through replica selection.
 * See docs/batching.md.
 */
import { BATCH_ACCEPT, BATCH_MEDIA_TYPE, CACHE_DIGEST_HEADER, DEFAULT_CACHE_DIGEST_FP_LOG2, type BatchPart } from '@webpp/core';
import { idbKeyValueStore, type KeyValueStore } from '../storage.js';
import { startBatchSession, type BatchSessionResult } from './batch-session.js';
import { LogicalCache, type CacheLike, type LogicalCacheStats } from './logical-cache.js';
import { PendingParts } from './pending-parts.js';
import { OFFLINE_COPY_HEADER } from '../offline-copies.js';
import { stripHash } from '../_private/strip-hash.js';

export interface BatchClientOptions {
  /** Ask for batches and use the logical cache at all. Default true. */
  enabled?: boolean;
  /** Cache Storage name of the logical-URL cache. Default 'webpp-logical-v1'. */
  cacheName?: string;
  /** Bound of the logical cache in body bytes. Default 50 MiB. */
  maxCacheBytes?: number;
  /** Bound of the logical cache in entries. Default 2000. */
  maxCacheEntries?: number;
  /** Longest batch part accepted. Default 32 MiB. */
  maxPartBytes?: number;
  /** Header budget of the cache digest. Default 4096 characters. */
  digestMaxBytes?: number;
  /** p of the cache digest: false positives at rate 2^-p. Default 8. */
  digestFalsePositiveLog2?: number;
  /** A batch stream silent for this long is abandoned (its parts fetched individually). Default 10 s. */
  idleTimeoutMs?: number;
  /** Longest a browser request waits for its part before going to the network. Default 15 s. */
  pendingTimeoutMs?: number;
  /** Longest a navigation waits for the page's part before loading the page the normal way. Default 20 s. */
  pageTimeoutMs?: number;
  /**
   * A part just received in a batch, or an entry whose validator a batch manifest confirmed,
   * serves without revalidation this long (the page load it came for). Default 60 s.
   */
  validatedWindowMs?: number;
  /** After an origin answered a batch request with a plain page, send it no digest for this long. Default 10 min. */
  nonBatchingMemoryMs?: number;
  /** Index writes to IndexedDB are batched this much. Default 1 s. */
  flushDelayMs?: number;
  storage?: KeyValueStore;
  openCache?: () => Promise<CacheLike>;
  now?: () => number;
  /** Sees (and returns) each page taken from a batch before the browser gets it: offline copies keep it. */
  pageWillRespond?: (request: Request, page: Response, waitUntil: (promise: Promise<unknown>) => void) => Response;
}

export const DEFAULT_LOGICAL_CACHE_NAME = 'webpp-logical-v1';

/** How the batch layer reaches the network: the worker's normal, replica-selecting path. */
export interface BatchIO {
  /** Sends a request the normal way (replica selection, failover, bindings learning). */
  network(request: Request): Promise<Response>;
  waitUntil(promise: Promise<unknown>): void;
  /** The validator the bindings announce for a logical URL, if any. */
  boundValidator?(url: string): string | undefined;
}

/**
 * How a navigation is sent: the worker's normal handling of the very navigation request
 * (replica selection, failover, redirects, error page, decision records), with `decorate`
 * applied to every physical request it sends, which turns each into a batch request.
 */
export interface NavigationIO {
  respond(decorate?: (physical: Request) => Request): Promise<Response>;
  waitUntil(promise: Promise<unknown>): void;
}

export interface BatchCounters {
  /** Navigations that asked for a batch. */
  requested: number;
  /** ... and got one. */
  batched: number;
  /** ... and got a plain page (the origin does not batch). */
  unsupported: number;
  /** Navigations that fell back to a normal request (batch unusable before the page arrived). */
  pageFallbacks: number;
  /** Browser requests answered with a batch part. */
  servedFromBatch: number;
  /** Browser requests answered from the logical cache without the network. */
  servedFromCache: number;
  /** Revalidations sent (conditional requests) and how many got 304. */
  revalidations: number;
  notModified: number;
  /** Browser requests that waited for a part and then went to the network. */
  partFallbacks: number;
  /** Internal errors, answered by failing open. */
  internalErrors: number;
}

export interface BatchSnapshot {
  type: 'webpp:batch-state';
  enabled: boolean;
  counters: BatchCounters;
  cache: LogicalCacheStats;
  pending: number;
  lastSession: BatchSessionResult | undefined;
}

function originOf(url: string): string {
  const match = /^[a-z][a-z0-9+.-]*:\/\/[^/?#]*/i.exec(url);
  return match ? match[0].toLowerCase() : url;
}

function isHtml(response: Response): boolean {
  const type = response.headers.get('content-type')?.split(';', 1)[0]?.trim().toLowerCase();
  return type === 'text/html' || type === 'application/xhtml+xml';
}

function isBatchResponse(response: Response): boolean {
  const type = response.headers.get('content-type')?.split(';', 1)[0]?.trim().toLowerCase();
  return response.status === 200 && type === BATCH_MEDIA_TYPE && response.body !== null;
}

function partResponse(part: BatchPart): Response {
  // Batch bodies are plain ArrayBuffer views (never shared memory).
  return new Response(part.body as Uint8Array<ArrayBuffer>, { status: part.status, headers: part.headers });
}

function globalCaches(): CacheStorage | undefined {
  return (globalThis as { caches?: CacheStorage }).caches;
}

export class BatchClient {
  readonly enabled: boolean;
  readonly cache: LogicalCache;
  readonly pending = new PendingParts();
  readonly counters: BatchCounters = {
    requested: 0,
    batched: 0,
    unsupported: 0,
    pageFallbacks: 0,
    servedFromBatch: 0,
    servedFromCache: 0,
    revalidations: 0,
    notModified: 0,
    partFallbacks: 0,
    internalErrors: 0,
  };
  private readonly idleTimeoutMs: number;
  private readonly pendingTimeoutMs: number;
  private readonly pageTimeoutMs: number;
  private readonly nonBatchingMemoryMs: number;
  private readonly maxPartBytes: number;
  private readonly now: () => number;
  /** Origins that answered a batch request with a plain page, until when. */
  private readonly nonBatching = new Map<string, number>();
  private lastSession: BatchSessionResult | undefined;
  private readonly pageWillRespond: BatchClientOptions['pageWillRespond'];

  constructor(options: BatchClientOptions = {}) {
    this.enabled = options.enabled ?? true;
    this.pageWillRespond = options.pageWillRespond;
    this.now = options.now ?? Date.now;
    this.idleTimeoutMs = options.idleTimeoutMs ?? 10_000;
    this.pendingTimeoutMs = options.pendingTimeoutMs ?? 15_000;
    this.pageTimeoutMs = options.pageTimeoutMs ?? 20_000;
    this.nonBatchingMemoryMs = options.nonBatchingMemoryMs ?? 10 * 60_000;
    this.maxPartBytes = options.maxPartBytes ?? 32 * 1024 * 1024;
    const cacheName = options.cacheName ?? DEFAULT_LOGICAL_CACHE_NAME;
    this.cache = new LogicalCache({
      openCache:
        options.openCache ??
        (async () => {
          const caches = globalCaches();
          if (!caches) throw new Error('no Cache Storage');
          return caches.open(cacheName);
        }),
      storage: options.storage ?? idbKeyValueStore(),
      maxBytes: options.maxCacheBytes ?? 50 * 1024 * 1024,
      maxEntries: options.maxCacheEntries ?? 2000,
      validatedWindowMs: options.validatedWindowMs ?? 60_000,
      digestMaxBytes: options.digestMaxBytes ?? 4096,
      digestFalsePositiveLog2: options.digestFalsePositiveLog2 ?? DEFAULT_CACHE_DIGEST_FP_LOG2,
      flushDelayMs: options.flushDelayMs ?? 1_000,
      now: this.now,
    });
  }

  /**
   * Synchronous and cheap: whether the batch layer answers this request. 'navigate' for a
   * page load; 'resource' for a GET of a logical URL that a batch is delivering or the
   * logical cache holds; undefined for everything else (left to the normal path).
   */
  claim(request: Request): 'navigate' | 'resource' | undefined {
    if (!this.enabled || request.method !== 'GET') return undefined;
    if (request.mode === 'navigate') {
      // An origin that answered plain pages recently is left alone (and keeps its HTTP caching).
      const until = this.nonBatching.get(originOf(request.url));
      return until !== undefined && until > this.now() ? undefined : 'navigate';
    }
    // Byte ranges (media) are never served from a batch: the network answers them exactly.
    if (request.headers.has('range')) return undefined;
    const url = stripHash(request.url);
    return this.pending.has(url) || this.cache.has(url) ? 'resource' : undefined;
  }

  /**
   * A page load: asks for a batch through the normal path and answers with the page as soon
   * as its part is complete; the rest streams into the logical cache in the background. Any
   * problem before the page is there loads the page the normal way instead.
   */
  async navigate(request: Request, io: NavigationIO): Promise<Response> {
    let decorate: (physical: Request) => Request;
    try {
      await this.cache.ready;
      decorate = this.batchDecorator(request.url);
    } catch {
      this.counters.internalErrors += 1;
      return io.respond();
    }
    this.counters.requested += 1;
    const response = await io.respond(decorate);
    if (!isBatchResponse(response)) {
      // A plain answer is the answer: a redirect (already mapped to the logical URL), the
      // error page after every replica failed, or the page of an origin without batching.
      if (response.status === 200 && isHtml(response) && !response.headers.has(OFFLINE_COPY_HEADER)) {
        this.counters.unsupported += 1;
        this.nonBatching.set(originOf(request.url), this.now() + this.nonBatchingMemoryMs);
      }
      return response;
    }
    this.counters.batched += 1;
    this.nonBatching.delete(originOf(request.url));
    const session = startBatchSession(response.body as ReadableStream<Uint8Array>, {
      pending: this.pending,
      cache: this.cache,
      idleTimeoutMs: this.idleTimeoutMs,
      maxPartBytes: this.maxPartBytes,
    });
    io.waitUntil(
      session.done.then((result) => {
        this.lastSession = result;
      }),
    );
    let page: BatchPart;
    let timer: ReturnType<typeof setTimeout> | undefined;
    try {
      // A server that trickles bytes is never idle; the page still gets a bound of its own.
      const pageTimeout = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error('page part too slow')), this.pageTimeoutMs);
      });
      page = await Promise.race([session.page, pageTimeout]);
    } catch {
      // The parts that do arrive still land in the cache and serve the fallback page load.
      this.counters.pageFallbacks += 1;
      return io.respond();
    } finally {
      clearTimeout(timer);
    }
    return this.pageWillRespond ? this.pageWillRespond(request, partResponse(page), io.waitUntil.bind(io)) : partResponse(page);
  }

  /**
   * A request for an embedded resource: from its batch part (waiting for it if needed),
   * else from the logical cache (revalidating a stale entry), else from the network.
   */
  async serve(request: Request, io: BatchIO): Promise<Response> {
    const url = stripHash(request.url);
    const waiting = this.pending.wait(url, this.pendingTimeoutMs);
    if (waiting !== undefined) {
      const outcome = await waiting;
      if (outcome.kind === 'part') {
        this.counters.servedFromBatch += 1;
        return partResponse(outcome.part);
      }
      this.counters.partFallbacks += 1;
      return this.fetchAndStore(request, io);
    }
    await this.cache.ready;
    if (request.cache === 'no-store' || request.cache === 'reload') return this.fetchAndStore(request, io);
    const decision = this.cache.decide(url, io.boundValidator?.(url));
    if (decision.kind === 'fresh') {
      const cached = await this.cache.read(url);
      if (cached) {
        this.counters.servedFromCache += 1;
        return cached;
      }
      return this.fetchAndStore(request, io);
    }
    if (decision.kind === 'stale' && decision.validator !== undefined) return this.revalidate(request, decision.validator, io);
    return this.fetchAndStore(request, io);
  }

  /**
   * The whole fetch-event handling for a worker: returns true when it called respondWith.
   * `respond(request, decorate?)` is the worker's own handling of a request (replica
   * selection or plain fetch), applying `decorate` to the physical requests it sends.
   * Fails open: an internal error answers with the plain `respond(request)`.
   */
  handleFetch(
    event: FetchEvent,
    respond: (request: Request, decorate?: (physical: Request) => Request) => Promise<Response>,
    boundValidator?: (url: string) => string | undefined,
  ): boolean {
    let claim: ReturnType<BatchClient['claim']>;
    try {
      claim = this.claim(event.request);
    } catch {
      return false;
    }
    if (claim === undefined) return false;
    const original = event.request;
    const waitUntil = (promise: Promise<unknown>): void => event.waitUntil(promise);
    const answer =
      claim === 'navigate'
        ? this.navigate(original, { respond: (decorate) => respond(original, decorate), waitUntil })
        : this.serve(original, { network: (request) => respond(request), waitUntil, boundValidator });
    event.respondWith(
      answer.catch(() => {
        this.counters.internalErrors += 1;
        return respond(original);
      }),
    );
    return true;
  }

  snapshot(): BatchSnapshot {
    return {
      type: 'webpp:batch-state',
      enabled: this.enabled,
      counters: { ...this.counters },
      cache: this.cache.snapshot(),
      pending: this.pending.size,
      lastSession: this.lastSession,
    };
  }

  // ------------------------------------------------------------------ internals

  /**
   * Turns each physical request of a navigation into a batch request: Accept names the
   * batch type, the cache digest goes along (unless the origin recently showed it does not
   * batch), and the HTTP cache stays out of it (every batch is made for its digest).
   */
  private batchDecorator(pageUrl: string): (physical: Request) => Request {
    const unsupportedUntil = this.nonBatching.get(originOf(pageUrl));
    const digest = unsupportedUntil === undefined || unsupportedUntil < this.now() ? this.cache.digest().value : '';
    return (physical) => {
      const headers = new Headers(physical.headers);
      headers.set('accept', BATCH_ACCEPT);
      if (digest !== '') headers.set(CACHE_DIGEST_HEADER, digest);
      // Same URL, mode, credentials, redirect mode and abort signal as the physical request.
      return new Request(physical, { headers, cache: 'no-store' });
    };
  }

  /**
   * The network answers; a storable answer for a logical URL this layer looks after (it was
   * announced by a batch or is in the cache) is kept for the next page load.
   */
  private async fetchAndStore(request: Request, io: BatchIO): Promise<Response> {
    const response = await io.network(request);
    if (response.status === 200 && (response.type === 'basic' || response.type === 'cors' || response.type === 'default')) {
      const copy = response.clone();
      io.waitUntil(
        copy
          .arrayBuffer()
          .then((body) => this.cache.store(request.url, copy.status, copy.headers, new Uint8Array(body)))
          .catch(() => false),
      );
    }
    return response;
  }

  /** Conditional request with the stored validator; 304 refreshes and serves the stored copy. */
  private async revalidate(request: Request, validator: string, io: BatchIO): Promise<Response> {
    const url = stripHash(request.url);
    const origin = new URL(url).origin;
    const sameOrigin = (globalThis as { location?: { origin: string } }).location?.origin === origin;
    // A fresh request: the page's own may be no-cors, which drops If-None-Match silently.
    const conditional = new Request(url, {
      method: 'GET',
      // An explicit Cache-Control keeps fetch from adding "no-cache" to a conditional request
      // (Fetch standard, HTTP-network-or-cache fetch), which makes many servers answer 200.
      // Cross-origin replicas do not get it (not CORS-safelisted): they may answer 200, still correct.
      headers: { 'if-none-match': validator, 'cache-control': 'max-age=0' },
      mode: sameOrigin ? 'same-origin' : 'cors',
      credentials: sameOrigin ? 'include' : 'omit',
      cache: 'no-store',
      referrer: request.referrer === '' ? '' : request.referrer,
      referrerPolicy: request.referrerPolicy,
    });
    this.counters.revalidations += 1;
    let response: Response;
    try {
      response = await io.network(conditional);
    } catch {
      return this.fetchAndStore(request, io);
    }
    if (response.status === 304) {
      this.counters.notModified += 1;
      const refreshed = await this.cache.refresh(url, response.headers);
      if (refreshed) return refreshed;
      return this.fetchAndStore(request, io);
    }
    if (response.status === 200) {
      const copy = response.clone();
      io.waitUntil(
        copy
          .arrayBuffer()
          .then((body) => this.cache.store(url, copy.status, copy.headers, new Uint8Array(body)))
          .catch(() => false),
      );
      return response;
    }
    // Anything else (404, 5xx after failover): the stored copy is no longer trustworthy.
    if (response.status === 404 || response.status === 410) io.waitUntil(this.cache.remove(url));
    return response;
  }
}
