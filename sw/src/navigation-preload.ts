/**
 * Navigation preload (Service Workers, "NavigationPreloadManager"): the browser sends a
 * navigation's request itself, in parallel with starting the worker and dispatching the
 * fetch event, and hands its answer to the worker as `event.preloadResponse`. A cold worker
 * (the browser stops an idle one after about 30 s) then costs the page its start-up, not its
 * start-up plus the request.
 *
 * The preload is the page's own request to the page's own URL, so it is used exactly where
 * the worker would send that request itself: the first GET of the navigation's own URL, as
 * it is (the plan's attempt at the own origin, or a navigation without bindings that the
 * worker only observes). A plan that sends the navigation to another replica first leaves the
 * preload unused, an extra request to the own origin; so the preload follows the site:
 * it is switched off after a navigation went elsewhere first, and on again after one was
 * sent to the own origin. The plan prefers the own origin for a navigation wherever the
 * policy predicts no gain elsewhere (ioFor's `preferred`; core's PlanInput.preferred), so among
 * equivalent replicas the preload stays on.
 */
import { stripHash } from './_private/strip-hash.js';

export type Fetcher = (request: Request) => Promise<Response>;

/** Answers that came from a preload: the browser sent them before the worker asked, so their timing is no sample. */
const preloaded = new WeakSet<Response>();

/** True for a navigation's preload response (samples.ts leaves it out). */
export function wasPreloaded(response: Response): boolean {
  return preloaded.has(response);
}

export class NavigationPreload {
  /** What the registration was last told; undefined before the first call. */
  private enabled: boolean | undefined;

  /**
   * `allowed` false keeps the preload off: batch transmission (the batch add-on) asks for a
   * page with a request of its own, so a preload would be one request too many.
   */
  constructor(
    private readonly registration: ServiceWorkerRegistration,
    private readonly allowed = true,
    private readonly plainFetch: Fetcher = (request) => fetch(request),
  ) {}

  /**
   * In `activate`: turns the preload on, or off when not allowed (the setting belongs to the
   * registration and outlives a worker with other options). Fails open: a browser without
   * it just has none.
   */
  activate(): Promise<void> {
    return this.set(this.allowed);
  }

  /**
   * How the worker sends this event's requests, and what is on its way for it. For a
   * navigation, the first GET of its own URL takes the preload response (or, with no preload,
   * is sent as usual), and every other request is a plain fetch; `preferred` is the server whose
   * answer the preload brings (the own origin), for the plan to prefer where it predicts no
   * gain elsewhere (RespondIO.preferred), so that the preload stays on; `preload` is that answer,
   * which a cold worker may give the page before its state is restored (RespondIO.preload,
   * cold-navigation.ts). Any other request, or with the preload not allowed: a plain fetch alone.
   */
  ioFor(event: FetchEvent): { fetch: Fetcher; preferred?: string; preload?: Promise<Response | undefined> } {
    const logical = event.request;
    if (logical.mode !== 'navigate' || logical.method !== 'GET' || !this.allowed) return { fetch: this.plainFetch };
    const preload = (event as { preloadResponse?: Promise<Response | undefined> }).preloadResponse;
    // Let the preload settle within the event even when it goes unused (else the browser warns it was cancelled).
    if (preload !== undefined) event.waitUntil(preload.catch(() => undefined));
    let first = true;
    const fetch: Fetcher = (request) => {
      const isFirst = first;
      first = false;
      const own = request.method === 'GET' && stripHash(request.url) === stripHash(logical.url) && request.cache === logical.cache && !request.headers.has('range');
      if (isFirst) void this.set(own);
      if (!isFirst || !own || preload === undefined) return this.plainFetch(request);
      return usePreload(preload, request, this.plainFetch);
    };
    return { fetch, preferred: new URL(logical.url).origin, ...(preload === undefined ? {} : { preload }) };
  }

  private async set(enabled: boolean): Promise<void> {
    if (this.enabled === enabled) return;
    this.enabled = enabled;
    const manager = this.registration.navigationPreload as NavigationPreloadManager | undefined;
    try {
      await (enabled ? manager?.enable() : manager?.disable());
    } catch {
      // Not supported, or the worker is not active yet: navigations are fetched by the worker.
    }
  }
}

/** The preload's answer for `request`, or a plain fetch when there is none; the request's signal still aborts. */
function usePreload(preload: Promise<Response | undefined>, request: Request, plainFetch: Fetcher): Promise<Response> {
  const { signal } = request;
  if (signal.aborted) return Promise.reject(signal.reason as Error);
  const answer = preload.then(
    (response) => (response ? (preloaded.add(response), response) : plainFetch(request)),
    () => plainFetch(request),
  );
  return new Promise((resolve, reject) => {
    const abort = (): void => {
      reject(signal.reason as Error);
      void answer.then((response) => response.body?.cancel()).catch(() => undefined);
    };
    signal.addEventListener('abort', abort, { once: true });
    answer.then(resolve, reject).finally(() => signal.removeEventListener('abort', abort));
  });
}
