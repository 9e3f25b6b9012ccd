/**
 * The page script (/webpp.js) must load even when the page's own origin is down: the
 * worker then serves the page itself from a replica (paper Section 3.2: any replica can
 * serve), and without its script the page would have no `window.webpp`. The worker keeps
 * its own copy in Cache Storage:
 *
 *  - install: fetch /webpp.js (bypassing the HTTP cache) into `webpp-page-script-<version>`;
 *    every new worker does so again, so an update refreshes it;
 *  - activate: delete the caches of older versions;
 *  - requests for /webpp.js (any query): the copy answers (stale-while-revalidate). The page's
 *    `load` waits for this async script, and a request to the network (`no-cache`: a
 *    revalidation every page) through the worker cost pages more than anything else the
 *    script does (docs/service-worker.md, "What the worker costs a page"). At most once per
 *    `refreshEveryMs`, the network is asked in the background, and an answer whose
 *    validators differ from the copy's replaces it: a new page script reaches the next pages.
 *    Without a copy, the network answers, as without a worker.
 *
 * Everything fails open: without Cache Storage, or without a copy, the network answer (or
 * error) is what the page gets.
 *
 * Where the browser has ServiceWorker static routing (`InstallEvent.addRoutes`, Chromium ≥ 123),
 * the worker also declares at install that a GET of the plain /webpp.js (no query) is answered
 * from this version's cache by the browser itself (`routerRule`): no fetch event, no hop to the
 * worker's thread on the page's path, and no start of a stopped worker for it. A miss in the
 * cache falls back to the network, as without a worker. The background check then runs on
 * navigations instead (`checkInBackground`).
 */
import { SW_VERSION } from './version.js';

const PAGE_SCRIPT_CACHE_PREFIX = 'webpp-page-script-';

export interface PageScriptCacheOptions {
  /** Absolute URL of the page script, e.g. "http://a.localhost:8081/webpp.js". */
  scriptUrl: string;
  /** Default: globalThis.caches. */
  caches?: CacheStorage;
  /** Default: global fetch. */
  fetch?: (request: Request) => Promise<Response>;
  /** The copy is checked against the network at most this often (ms). Default 60 000. */
  refreshEveryMs?: number;
  /** Told each time the copy answered a request. */
  onServedFromCache?: () => void;
  /** Cache name; default `webpp-page-script-<SW_VERSION>`. */
  cacheName?: string;
}

/** Headers that tell whether two answers carry the same script. */
function sameScript(a: Response, b: Response): boolean {
  for (const name of ['etag', 'last-modified', 'content-length']) {
    if (a.headers.get(name) !== b.headers.get(name)) return false;
  }
  return true;
}

export class PageScriptCache {
  readonly cacheName: string;
  private readonly scriptUrl: URL;
  private readonly cachesGiven: CacheStorage | undefined;
  private readonly fetch: (request: Request) => Promise<Response>;
  private readonly refreshEveryMs: number;
  private refreshedAtMs = -Infinity;
  private readonly onServedFromCache: (() => void) | undefined;

  constructor(options: PageScriptCacheOptions) {
    this.scriptUrl = new URL(options.scriptUrl);
    this.scriptUrl.search = '';
    this.scriptUrl.hash = '';
    this.cachesGiven = options.caches;
    this.fetch = options.fetch ?? ((request) => fetch(request));
    this.refreshEveryMs = options.refreshEveryMs ?? 60_000;
    this.onServedFromCache = options.onServedFromCache;
    this.cacheName = options.cacheName ?? `${PAGE_SCRIPT_CACHE_PREFIX}${SW_VERSION}`;
  }

  /** Read when first used, not at the worker's start: the first read of `caches` is a measurable part of its evaluation. */
  private get caches(): CacheStorage | undefined {
    return this.cachesGiven ?? (globalThis as { caches?: CacheStorage }).caches;
  }

  /** A GET of the page script, with or without a query. */
  matches(request: Request): boolean {
    if (request.method !== 'GET') return false;
    const url = request.url;
    const base = this.scriptUrl.href;
    return url.startsWith(base) && (url.length === base.length || url[base.length] === '?' || url[base.length] === '#');
  }

  /** At install: a fresh copy. Never rejects (an origin that is down must not stop the install). */
  async install(): Promise<void> {
    if (!this.caches) return;
    try {
      const response = await this.fetch(new Request(this.scriptUrl.href, { cache: 'no-cache', credentials: 'same-origin' }));
      if (response.ok) await (await this.caches.open(this.cacheName)).put(this.scriptUrl.href, response);
      else await response.body?.cancel();
    } catch {
      // No copy this time; the next install tries again.
    }
  }

  /** At activate: drop the copies of other versions. Never rejects. */
  async activate(): Promise<void> {
    const caches = this.caches;
    if (!caches) return;
    try {
      const names = await caches.keys();
      await Promise.all(
        names.filter((name) => name.startsWith(PAGE_SCRIPT_CACHE_PREFIX) && name !== this.cacheName).map((name) => caches.delete(name)),
      );
    } catch {
      // Old copies stay; they are small.
    }
  }

  /**
   * The static route (`InstallEvent.addRoutes`) for the plain script URL: the browser answers it
   * from this version's copy without a fetch event. With a query, the fetch event answers
   * (`respond`), since the copy is kept under the plain URL.
   */
  routerRule(): { condition: { urlPattern: { pathname: string; search: string }; requestMethod: string }; source: { cacheName: string } } {
    return { condition: { urlPattern: { pathname: this.scriptUrl.pathname, search: '' }, requestMethod: 'GET' }, source: { cacheName: this.cacheName } };
  }

  /** The copy; the network when there is none, and in the background at most once per `refreshEveryMs`. */
  async respond(request: Request, waitUntil: (promise: Promise<unknown>) => void): Promise<Response> {
    const copy = await this.copy();
    if (!copy) return this.fetch(request).catch(() => Response.error());
    this.onServedFromCache?.();
    this.checkInBackground(waitUntil);
    return copy;
  }

  /** At most once per `refreshEveryMs`: asks the network for the script, and keeps an answer that carries another one. */
  checkInBackground(waitUntil: (promise: Promise<unknown>) => void): void {
    const nowMs = Date.now();
    if (nowMs - this.refreshedAtMs < this.refreshEveryMs) return;
    this.refreshedAtMs = nowMs;
    waitUntil(this.fetch(new Request(this.scriptUrl.href, { cache: 'no-cache', credentials: 'same-origin' })).then((response) => (response.ok ? this.refresh(response) : response.body?.cancel()), () => undefined));
  }

  private async copy(): Promise<Response | undefined> {
    try {
      return (await (await this.caches?.open(this.cacheName))?.match(this.scriptUrl.href)) ?? undefined;
    } catch {
      return undefined;
    }
  }

  /** Replaces the copy when the network answer carries another script. */
  private async refresh(response: Response): Promise<void> {
    try {
      if (!this.caches) return;
      const cache = await this.caches.open(this.cacheName);
      const current = await cache.match(this.scriptUrl.href);
      if (current && sameScript(current, response)) {
        await response.body?.cancel();
        return;
      }
      // Cache under the plain URL (no query): every variant of the tag gets the same script.
      await cache.put(this.scriptUrl.href, response);
    } catch {
      // The old copy stays.
    }
  }
}
