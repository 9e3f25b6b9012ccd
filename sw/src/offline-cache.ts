/**
 * Offline copies: when every replica (and the site's own origin) fails, a page or resource
 * the visitor already loaded is served from a copy saved under its LOGICAL URL (paper
 * Section 3.5's logical-URL cache, used here for stale-if-error, RFC 5861 §4).
 *
 * Guarantees:
 *  - a saved copy is used only when the network path failed: every attempt failed with a
 *    network error, a timeout or a 5xx. A live answer (including 404/410) always wins, and a
 *    404/410 deletes the copy;
 *  - the page is told: the response carries `webpp-offline-copy: <HTTP date it was saved>`,
 *    the worker publishes an `offline-copy` event and counts it in the state snapshot;
 *  - what is saved: complete 200 answers to GET requests without Range, that HTTP allows a
 *    cache to keep (no `no-store`, no Set-Cookie, Vary at most on Accept-Encoding), and not
 *    `must-revalidate` (RFC 9111 §4.2.4: never served stale). Nothing personal: no response
 *    to a request with an Authorization header, no `private` or `no-cache` response to a
 *    request that carries credentials, no response to a credentialed request to another
 *    origin (Set-Cookie is also refused, but browsers hide it from workers: the credentials
 *    rule is what keeps personal pages out);
 *  - bounded in bytes, in entries (least recently used evicted first) and per entry; a copy
 *    older than maxAgeMs is never served.
 *
 * Storage is a second instance of the batch layer's LogicalCache (bodies in Cache Storage,
 * index in IndexedDB, LRU, reconciled at start), under its own names: its entries are never
 * served while the network answers, so it must not feed the batch layer's fresh hits.
 */
import { BATCH_MEDIA_TYPE, parseCacheControl, storability } from '@webpp/core';
import { LogicalCache, type CacheLike } from './batch/logical-cache.js';
import type { KeyValueStore } from './storage.js';
import { OFFLINE_COPY_HEADER } from './offline-copies.js';
import type { OfflineCopies, OfflineCopiesFactory, OfflineStats } from './offline-copies.js';
import type { WorkerPlugin } from './plugins.js';

export { OFFLINE_COPY_HEADER } from './offline-copies.js';
import { readCapped } from './_private/read-capped.js';

const OFFLINE_CACHE_NAME = 'webpp-offline-v1';
const OFFLINE_INDEX_KEY = 'offline-cache-index';

interface OfflineLimits {
  /** Total body bytes kept; 0 turns offline copies off. */
  maxBytes: number;
  maxEntries: number;
  /** A larger response is not saved. */
  maxEntryBytes: number;
  /** A copy saved longer ago than this is not served. */
  maxAgeMs: number;
}

interface OfflineCacheOptions extends OfflineLimits {
  storage: KeyValueStore;
  /** The site's own origin: requests to other origins that carry credentials are not saved. */
  selfOrigin: string;
  /** Default: Cache Storage `webpp-offline-v1`; without Cache Storage, offline copies are off. */
  openCache?: () => Promise<CacheLike>;
  flushDelayMs: number;
  now?: () => number;
  /** Told each time a saved copy answers a request. */
  onServed?: (logicalUrl: string, savedAtMs: number) => void;
}

/** Whether to save the answer to a request, forget the copy (the answer forbids it), or neither. Pure. */
function offlineVerdict(request: Request, response: Response, logicalUrl: string, selfOrigin: string): 'save' | 'forget' | 'skip' {
  if (request.method !== 'GET' || request.headers.has('range') || request.cache === 'no-store') return 'skip';
  // The resource is gone: its copy must not come back while the servers are down.
  if (response.status === 404 || response.status === 410) return 'forget';
  if (response.status !== 200 || response.body === null) return 'skip';
  if (response.type === 'opaque' || response.type === 'opaqueredirect' || response.type === 'error') return 'skip';
  const type = response.headers.get('content-type')?.split(';', 1)[0]?.trim().toLowerCase();
  if (type === BATCH_MEDIA_TYPE) return 'skip'; // a batch stream, not the page itself
  // From here the answer itself decides: a copy it forbids must not outlive it either.
  if (!storability(response.status, navigationVariant(request, response.headers)).storable) return 'forget';
  const control = response.headers.get('cache-control');
  if (parseCacheControl(control).mustRevalidate) return 'forget';
  const sameOrigin = originOf(logicalUrl) === selfOrigin;
  const credentialed = request.credentials === 'include' || (request.credentials === 'same-origin' && sameOrigin);
  if (request.headers.has('authorization')) return 'skip';
  if (credentialed && !sameOrigin) return 'skip';
  // A credentialed answer marked private or no-cache may be personal ("Hello Alice"): it
  // must not be shown again, stale, to whoever uses the browser next.
  if (credentialed && control !== null && /(^|,)\s*(private|no-cache)\s*(=|,|$)/i.test(control)) return 'forget';
  return 'save';
}

/** Marks a stored copy that only navigations may get (see navigationVariant). */
const NAVIGATION_ONLY_HEADER = 'webpp-offline-navigation-only';

/**
 * Pages vary on Accept where the origin batches (a batch or the HTML page). The copy keyed by
 * URL alone is then the HTML a navigation got: kept without that Vary field, marked, and
 * served to navigations only.
 */
function navigationVariant(request: Request, headers: Headers): Headers {
  const fields = (headers.get('vary') ?? '').split(',').map((field) => field.trim()).filter((field) => field !== '');
  if (request.mode !== 'navigate' || !fields.some((field) => field.toLowerCase() === 'accept')) return headers;
  const rest = fields.filter((field) => field.toLowerCase() !== 'accept');
  const copy = new Headers(headers);
  if (rest.length === 0) copy.delete('vary');
  else copy.set('vary', rest.join(', '));
  copy.set(NAVIGATION_ONLY_HEADER, '1');
  return copy;
}

/** Cache-Control that forbids serving a stored answer stale, or may mark it personal. */
function forbidsStaleUse(cacheControl: string | null): boolean {
  return cacheControl !== null && /(^|,)\s*(private|no-cache|no-store|must-revalidate)\s*(=|,|$)/i.test(cacheControl);
}

function originOf(url: string): string {
  try {
    return new URL(url).origin;
  } catch {
    return '';
  }
}

/** handlerDidError (a saved copy when every replica failed) and cacheWillUpdate (the page's answer may be kept). */
function offlinePlugin(offline: OfflineCopies): WorkerPlugin {
  return {
    handlerDidError: (bound) => offline.rescue(bound.request, bound.logicalUrl),
    cacheWillUpdate: (request, logicalUrl, response, waitUntil) => offline.keep(request, logicalUrl, response, waitUntil),
  };
}

class OfflineCache implements OfflineCopies {
  readonly plugin = offlinePlugin(this);
  readonly enabled: boolean;
  private readonly cache: LogicalCache;
  private readonly limits: OfflineLimits;
  private readonly selfOrigin: string;
  private readonly now: () => number;
  private readonly onServed: OfflineCacheOptions['onServed'];
  private saved = 0;
  private servedFromCache = 0;
  private lastAtMs: number | null = null;
  /** Other logical-URL caches whose entries may serve as offline copies (the batch layer's). */
  private readonly sources: LogicalCache[] = [];

  constructor(options: OfflineCacheOptions) {
    const caches = (globalThis as { caches?: CacheStorage }).caches;
    this.enabled = options.maxBytes > 0 && options.maxEntries > 0 && (options.openCache !== undefined || caches !== undefined);
    this.limits = options;
    this.selfOrigin = options.selfOrigin;
    this.now = options.now ?? Date.now;
    this.onServed = options.onServed;
    const openCache = options.openCache ?? (() => (caches as CacheStorage).open(OFFLINE_CACHE_NAME));
    // Turned off: copies kept by an earlier configuration go too.
    if (!this.enabled && options.openCache === undefined) void caches?.delete(OFFLINE_CACHE_NAME).catch(() => false);
    this.cache = new LogicalCache({
      openCache: this.enabled ? openCache : () => Promise.reject(new Error('offline copies are off')),
      storage: options.storage,
      maxBytes: options.maxBytes,
      maxEntries: options.maxEntries,
      validatedWindowMs: 0,
      digestMaxBytes: 0,
      digestFalsePositiveLog2: 1,
      flushDelayMs: options.flushDelayMs,
      now: this.now,
      indexKey: OFFLINE_INDEX_KEY,
    });
  }

  /**
   * Called with the answer the page gets for `logicalUrl`; returns it unchanged. Saves a
   * copy in the background (a tee of the body, read in waitUntil) when the rules allow, and
   * only touches the copy when it already holds the same version (same ETag).
   */
  keep(request: Request, logicalUrl: string, response: Response, waitUntil: (promise: Promise<unknown>) => void): Response {
    if (!this.enabled) return response;
    const verdict = offlineVerdict(request, response, logicalUrl, this.selfOrigin);
    if (verdict === 'forget') {
      // Gone (404/410) or no longer to be kept: from every cache offline copies come from.
      for (const cache of [this.cache, ...this.sources]) if (cache.has(logicalUrl)) waitUntil(cache.remove(logicalUrl));
      return response;
    }
    if (verdict === 'skip') return response;
    const held = this.cache.entryInfo(logicalUrl);
    const etag = response.headers.get('etag');
    // The same version: only its LRU position moves (a copy past half its age is saved anew,
    // so that a resource confirmed unchanged never ages out of maxAgeMs).
    if (held !== undefined && etag !== null && held.validator === etag.trim() && this.now() - held.storedAtMs < this.limits.maxAgeMs / 2) {
      this.cache.touch(logicalUrl);
      return response;
    }
    const copy = response.clone();
    const maxEntryBytes = Math.min(this.limits.maxEntryBytes, this.limits.maxBytes);
    waitUntil(
      readCapped(copy, maxEntryBytes)
        .then((body) => (body === undefined ? false : this.cache.store(logicalUrl, 200, navigationVariant(request, copy.headers), body)))
        .then((stored) => void (stored && (this.saved += 1)))
        .catch(() => undefined), // a body that broke off is simply not saved
    );
    return response;
  }

  /** Also serve entries of another logical-URL cache as offline copies (the batch layer's). */
  alsoFrom(cache: LogicalCache): void {
    this.sources.push(cache);
  }

  /** The saved copy of `logicalUrl` marked as such, or undefined. Call only when the network path failed. */
  async rescue(request: Request, logicalUrl: string): Promise<Response | undefined> {
    if (!this.enabled || request.method !== 'GET' || request.cache === 'no-store') return undefined;
    try {
      await this.cache.ready;
      const source = [this.cache, ...this.sources].find((cache) => cache.has(logicalUrl));
      const held = source?.entryInfo(logicalUrl);
      if (source === undefined || held === undefined || this.now() - held.storedAtMs > this.limits.maxAgeMs) return undefined;
      const stored = await source.read(logicalUrl);
      if (stored === undefined) return undefined;
      if (source !== this.cache && forbidsStaleUse(stored.headers.get('cache-control'))) {
        // Another cache (the batch layer's) keeps what it may serve fresh; stale, offline,
        // only what the rules above would have kept.
        await stored.body?.cancel();
        return undefined;
      }
      if (stored.headers.has(NAVIGATION_ONLY_HEADER) && request.mode !== 'navigate') {
        await stored.body?.cancel();
        return undefined; // the HTML a navigation got, not necessarily what this request accepts
      }
      const headers = new Headers(stored.headers);
      headers.delete(NAVIGATION_ONLY_HEADER);
      headers.set(OFFLINE_COPY_HEADER, new Date(held.storedAtMs).toUTCString());
      this.servedFromCache += 1;
      this.lastAtMs = this.now();
      this.onServed?.(logicalUrl, held.storedAtMs);
      return new Response(stored.body, { status: stored.status, statusText: stored.statusText, headers });
    } catch {
      return undefined; // Cache Storage failed: the page gets what it would have without copies
    }
  }

  /** Writes the index now. */
  flush(): Promise<void> {
    return this.cache.flush();
  }

  snapshot(): OfflineStats {
    const stats = this.cache.snapshot();
    return { entries: stats.entries, bytes: stats.bytes, saved: this.saved, servedFromCache: this.servedFromCache, lastAtMs: this.lastAtMs };
  }
}

/** The offline copies of the worker's options (the webpp-sw-offline.js add-on, and a Workbox worker's default). */
export const createOfflineCopies: OfflineCopiesFactory = ({ options, storage, selfOrigin, reporter, openCache }) =>
  new OfflineCache({
    storage,
    selfOrigin,
    maxBytes: options.offlineMaxBytes,
    maxEntries: options.offlineMaxEntries,
    maxEntryBytes: options.offlineMaxEntryBytes,
    maxAgeMs: options.offlineMaxAgeMs,
    flushDelayMs: options.flushDelayMs,
    ...(openCache ? { openCache } : {}),
    onServed: (logicalUrl, savedAtMs) => {
      reporter.count('offlineCopies');
      reporter.event({ type: 'offline-copy', atMs: Date.now(), logicalUrl, savedAtMs });
    },
  });
