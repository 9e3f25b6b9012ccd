/**
 * The page script (/webpp.js) must load even when the page's own origin is down: the
 * worker then serves the page itself from a replica (paper Section 3.2: any replica can
 * serve), and without its script the page would have no `window.webpp`. The worker keeps
 * its own copy in Cache Storage:
 *
 *  - install: fetch /webpp.js (bypassing the HTTP cache) into `webpp-page-script-<version>`;
 *    every new worker does so again, so an update refreshes it;
 *  - activate: delete the caches of older versions;
 *  - requests for /webpp.js (any query): the network first, as without a worker; the copy
 *    when the network fails, answers 5xx, or has not answered within `networkTimeoutMs`:
 *    the time the policy gives an attempt on the own origin now (its timeout from its own
 *    first bytes; at once while the policy holds the origin failed), not a flat wait. The
 *    copy costs no request, so the page need not wait on an origin known to be down or
 *    hanging: `load` waits for this async script.
 *    A network answer whose validators differ from the copy's replaces it (in waitUntil).
 *
 * Everything fails open: without Cache Storage, or without a copy, the network answer (or
 * error) is what the page gets.
 */
import type { PolicyServerView } from '@webpp/core';
import { SW_VERSION } from './version.js';

const PAGE_SCRIPT_CACHE_PREFIX = 'webpp-page-script-';

/**
 * How long the page script's network answer is awaited before the copy (ms): 0 while the
 * policy holds the own origin failed (a probe will tell when it is back; the copy is the same
 * script), the timeout it gives an attempt there while it is measured, `fallbackMs` (the
 * initial timeout) before that. A request left to hang on a black-holed origin would hold the
 * page's `load` for the whole flat wait.
 */
export function ownOriginWaitMs(views: readonly PolicyServerView[], ownOrigin: string, fallbackMs: number): number {
  const own = views.find((view) => view.server === ownOrigin);
  if (own?.state === 'failed') return 0;
  return own?.timeoutMs !== undefined && own.sampleCount > 0 ? Math.min(fallbackMs, own.timeoutMs) : fallbackMs;
}

export interface PageScriptCacheOptions {
  /** Absolute URL of the page script, e.g. "http://a.localhost:8081/webpp.js". */
  scriptUrl: string;
  /** Default: globalThis.caches. */
  caches?: CacheStorage;
  /** Default: global fetch. */
  fetch?: (request: Request) => Promise<Response>;
  /**
   * Serve the copy when the network has not answered by then (it still refreshes the copy):
   * a number, or asked at each request (the own origin's timeout as the policy has it now; 0
   * while the policy holds it failed). Default 3 000.
   */
  networkTimeoutMs?: number | (() => number);
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
  private readonly caches: CacheStorage | undefined;
  private readonly fetch: (request: Request) => Promise<Response>;
  private readonly networkTimeoutMs: () => number;
  private readonly onServedFromCache: (() => void) | undefined;

  constructor(options: PageScriptCacheOptions) {
    this.scriptUrl = new URL(options.scriptUrl);
    this.scriptUrl.search = '';
    this.scriptUrl.hash = '';
    this.caches = options.caches ?? (globalThis as { caches?: CacheStorage }).caches;
    this.fetch = options.fetch ?? ((request) => fetch(request));
    const timeoutMs = options.networkTimeoutMs ?? 3_000;
    this.networkTimeoutMs = typeof timeoutMs === 'number' ? () => timeoutMs : timeoutMs;
    this.onServedFromCache = options.onServedFromCache;
    this.cacheName = options.cacheName ?? `${PAGE_SCRIPT_CACHE_PREFIX}${SW_VERSION}`;
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

  /** Network first; the copy when the network fails, answers 5xx or is too slow. */
  async respond(request: Request, waitUntil: (promise: Promise<unknown>) => void): Promise<Response> {
    const network = this.fetch(request).then(
      (response) => response,
      () => undefined,
    );
    let timer: ReturnType<typeof setTimeout> | undefined;
    const tooSlow = new Promise<'too-slow'>((resolve) => {
      timer = setTimeout(() => resolve('too-slow'), this.networkTimeoutMs());
    });
    const first = await Promise.race([network, tooSlow]);
    clearTimeout(timer);
    if (first !== 'too-slow' && first !== undefined && first.status < 500) {
      if (first.ok) waitUntil(this.refresh(first.clone()));
      return first;
    }
    const copy = await this.copy();
    if (copy) {
      this.onServedFromCache?.();
      if (first === 'too-slow') {
        waitUntil(network.then((late) => (late?.ok ? this.refresh(late) : late?.body?.cancel())));
      } else {
        first?.body?.cancel().catch(() => undefined);
      }
      return copy;
    }
    // No copy: whatever the network gives, as without a worker.
    const answer = first === 'too-slow' ? await network : first;
    return answer ?? Response.error();
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
