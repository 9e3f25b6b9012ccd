/**
 * The page script, /webpp.js: `<script src="/webpp.js" async></script>`.
 *
 * Registers the worker (/webpp-sw.js, scope "/") without blocking rendering, and gives the
 * page a small API, `window.webpp`:
 *   webpp.ready            Promise<ServiceWorkerRegistration | undefined>
 *   webpp.controlled()     Promise<void>, resolves once the worker controls this page
 *   webpp.state()          Promise<WorkerStateSnapshot>: latency table, decisions, events…
 *   webpp.flush()          Promise<void>: write the worker's batched state to IndexedDB now
 *   webpp.on(type, fn)     live events ('decision', 'failover', 'probe', … or '*'); returns an unsubscribe
 *
 * Options: the script's own query string and its data-* attributes are passed to the
 * worker (e.g. data-timeout-ceiling-ms="8000"; the options are sw/src/options-schema.ts);
 * data-sw and data-scope choose the worker URL and scope.
 */
import { REPLICA_UNUSABLE_MESSAGE, type ReplicaUnusableMessage, type WebppEvent, type WorkerStateSnapshot } from './messages.js';

interface WebppApi {
  version: string;
  ready: Promise<ServiceWorkerRegistration | undefined>;
  controlled(): Promise<void>;
  state(): Promise<WorkerStateSnapshot>;
  flush(): Promise<void>;
  on(type: WebppEvent['type'] | '*', listener: (event: WebppEvent) => void): () => void;
}

declare global {
  interface Window {
    webpp?: WebppApi;
  }
}

(() => {
  if (window.webpp) return;
  const CHANNEL = 'webpp';
  // messages.ts EVENTS_SUBSCRIBE, EVENTS_HELLO, EVENTS_LEASE_MS, FLUSH_REQUEST (literal: the page script imports no worker code).
  const SUBSCRIBE = 'webpp:subscribe';
  const HELLO = 'webpp:hello';
  const FLUSH = 'webpp:flush';
  const LEASE_MS = 60_000;
  const OFF_KEY = 'webpp:off';
  const ANSWER_TIMEOUT_MS = 5_000;
  const script = document.currentScript as HTMLScriptElement | null;
  const data = script?.dataset ?? {};

  // Worker options: the script's query, then its data-* attributes (data-ttl-ms → ttlMs).
  const params = new URLSearchParams(script?.src ? new URL(script.src, location.href).search : '');
  for (const [key, value] of Object.entries(data)) {
    if (key !== 'sw' && key !== 'scope' && value !== undefined) params.set(key, value);
  }
  const query = params.toString();
  const workerUrl = (data.sw ?? '/webpp-sw.js') + (query ? `?${query}` : '');
  const scope = data.scope ?? '/';
  const offRetryMs = Number(params.get('offRetryMs') ?? 3_600_000);

  const listeners = new Map<string, Set<(event: WebppEvent) => void>>();
  const container = 'serviceWorker' in navigator ? navigator.serviceWorker : undefined;

  const readOff = (): number => {
    try {
      return Number(localStorage.getItem(OFF_KEY) ?? 0);
    } catch {
      return 0;
    }
  };

  // A scope has one service worker. When the site already has its own there, registering
  // ours would replace it (its offline pages, push handlers…), and the site's own
  // register() on each page would replace ours back: the scope stays the site's. A site
  // worker seen installing over ours is remembered, as both register on every page load.
  const SITE_WORKER_KEY = 'webpp:site-worker';
  const workerHref = new URL(workerUrl, location.href);
  const isOurs = (worker: ServiceWorker | null): boolean => worker === null || new URL(worker.scriptURL).pathname === workerHref.pathname;
  const isSites = (registration: ServiceWorkerRegistration | undefined): boolean =>
    registration !== undefined && ![registration.installing, registration.waiting, registration.active].every(isOurs);
  const remember = (value: string | undefined): void => {
    try {
      if (value === undefined) localStorage.removeItem(SITE_WORKER_KEY);
      else localStorage.setItem(SITE_WORKER_KEY, value);
    } catch {
      // storage unavailable: decided again on each page
    }
  };
  const watch = (registration: ServiceWorkerRegistration | undefined): void =>
    registration?.addEventListener('updatefound', () => {
      if (!isOurs(registration.installing)) remember(registration.installing!.scriptURL);
    });
  const siteHoldsScope = (registration: ServiceWorkerRegistration | undefined): boolean => {
    let remembered: string | null = null;
    try {
      remembered = localStorage.getItem(SITE_WORKER_KEY);
    } catch {
      // as if nothing was remembered
    }
    if (registration === undefined) remember(undefined); // nothing holds the scope (any more)
    if (!isSites(registration) && (registration === undefined || remembered === null)) return false;
    console.warn(`webpp: the site's own service worker holds scope ${scope}; webpp stays off (docs/service-worker.md)`);
    return true;
  };

  // The page's own load first: the script's work (storage, registration, its reports to the
  // worker, whose thread dispatches the page's fetch events) waits until the `load` event is
  // over (docs/service-worker.md, "What the worker costs a page").
  const afterLoad = (run: () => void): void =>
    document.readyState === 'complete' ? void setTimeout(run) : addEventListener('load', () => setTimeout(run), { once: true });

  const unregisterOurs = (registration: ServiceWorkerRegistration | undefined): unknown => isSites(registration) || registration?.unregister();
  const register = (): Promise<ServiceWorkerRegistration | undefined> | undefined =>
    container
      ?.getRegistration(scope)
      .then((registration) => {
        // Switched off by the site (webpp-control: off): stay unregistered for a while.
        if (Date.now() - readOff() < offRetryMs) return Promise.resolve(unregisterOurs(registration)).then(() => undefined);
        // Ours controls this page but is no longer registered: it unregistered itself (webpp-control:
        // off) before this page's deferred registration; registering would revive it.
        if (!registration && container.controller && isOurs(container.controller)) return undefined;
        watch(registration);
        if (siteHoldsScope(registration)) return undefined;
        // Ours with these options already (the newest worker's URL, query included): register()
        // would change nothing, and the browser checks the worker script for updates on
        // navigations itself. Other options (data-*, query) register the new URL.
        if ((registration?.installing ?? registration?.waiting ?? registration?.active)?.scriptURL === workerHref.href) return registration;
        return container.register(workerUrl, { scope }).then((ours) => (registration === undefined && watch(ours), ours));
      })
      .catch((error: unknown) => void console.warn('webpp: service worker registration failed', error));
  const ready = new Promise<ServiceWorkerRegistration | undefined>((resolve) => afterLoad(() => resolve(register())));

  // The worker tells every page when the site switched it off (webpp-control: off). A page
  // that registered again before it heard (which revives the registration) unregisters too.
  container?.addEventListener('message', (message: MessageEvent<{ type?: string } | null>) => {
    if (message.data?.type !== 'webpp:control-off') return;
    try {
      localStorage.setItem(OFF_KEY, String(Date.now()));
    } catch {
      // storage unavailable: the worker's own marker still applies
    }
    void container.getRegistration(scope).then(unregisterOurs);
  });

  // A replica the worker cannot use (unusable-replicas.ts): one console warning per replica
  // and browsing session, naming it and the header it lacks.
  container?.addEventListener('message', (message: MessageEvent<ReplicaUnusableMessage | null>) => {
    const report = message.data;
    if (report?.type !== REPLICA_UNUSABLE_MESSAGE || typeof report.server !== 'string') return;
    const key = `webpp-unusable:${report.server}`;
    try {
      if (sessionStorage.getItem(key) !== null) return;
      sessionStorage.setItem(key, '1');
    } catch {
      // storage unavailable: warn anyway
    }
    const fix = report.missingHeader === undefined ? '' : ` It lacks the ${report.missingHeader} header: send "${report.missingHeader}: *" (and "Timing-Allow-Origin: *") from it.`;
    console.warn(`webpp: the replica ${report.server} cannot be used: ${report.reason} (seen on ${report.url}).${fix} Requests go to the other replicas; "webpp-origin check ${location.href}" lists what each replica lacks.`);
  });

  // Live events: the channel is opened only once someone listens, so pages without a
  // dashboard never spend time on them.
  let channel: BroadcastChannel | undefined;
  const listen = (): void => {
    if (channel || typeof BroadcastChannel === 'undefined') return;
    const opened = new BroadcastChannel(CHANNEL);
    channel = opened;
    // The worker publishes only to subscribers (a lease): subscribe now, on every worker's
    // hello (it started again), and a few times per lease (messages.ts EVENTS_SUBSCRIBE).
    const subscribe = (): void => opened.postMessage({ type: SUBSCRIBE });
    subscribe();
    setInterval(subscribe, LEASE_MS / 3);
    opened.onmessage = (message: MessageEvent<WebppEvent[] | { type?: unknown }>) => {
      if (!Array.isArray(message.data)) {
        if (message.data?.type === HELLO) subscribe();
        return;
      }
      for (const event of message.data) {
        for (const key of [event.type, '*']) listeners.get(key)?.forEach((listener) => listener(event));
      }
    };
  };

  const timeout = <T>(promise: Promise<T>, what: string): Promise<T> =>
    new Promise<T>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`webpp: ${what} timed out`)), ANSWER_TIMEOUT_MS);
      promise.then(
        (value) => (clearTimeout(timer), resolve(value)),
        (error: unknown) => (clearTimeout(timer), reject(error)),
      );
    });

  const ask = async <T>(type: string, payload: object = {}): Promise<T> => {
    if (!container || !(await ready)) throw new Error('webpp: no service worker');
    const worker = container.controller ?? (await timeout(container.ready, 'waiting for the worker')).active;
    if (!worker) throw new Error('webpp: no active service worker');
    const channel = new MessageChannel();
    const answer = new Promise<T>((resolve) => {
      channel.port1.onmessage = (message) => resolve(message.data as T);
    });
    worker.postMessage({ ...payload, type }, [channel.port2]);
    return timeout(answer, `${type}`);
  };

  // The worker writes what it learns (bindings, the policy's state) to IndexedDB in batches, at
  // most once a second. A browser that quits or kills the worker without grace loses what was
  // not written yet: after a first visit, everything, and the next start binds nothing. So the
  // page asks for the write when its load is over and when it is hidden (Page Lifecycle API:
  // "hidden" is the last state a page is sure to see), and only when its performance timeline
  // grew since it last asked (a hidden tab must not wake a stopped worker for nothing).
  let timelineSeen = 0;
  const flushState = (): void => {
    const timeline = performance.getEntries().length;
    if (!container?.controller || timeline === timelineSeen) return;
    timelineSeen = timeline;
    container.controller.postMessage({ type: FLUSH });
  };
  afterLoad(flushState);
  document.addEventListener('visibilitychange', () => document.hidden && flushState());

  // <object data> and <embed src> loads bypass the worker in Chromium, so they do not fail over
  // with the page. When one fails, or its server is down (the worker checks), it is moved to
  // a live replica the worker names: a copy of the element with that URL replaces it (setting
  // `data` again does not bring a failed <object> back). Once per element.
  const moved = new WeakSet<Element>();
  const sourceOf = (element: Element): string => (element instanceof HTMLObjectElement ? 'data' : 'src');
  const relocate = async (elements: Element[], failed: boolean): Promise<void> => {
    const pending = elements.filter((element) => !moved.has(element) && element.getAttribute(sourceOf(element)));
    if (pending.length === 0 || !container?.controller) return;
    const urls = pending.map((element) => new URL(element.getAttribute(sourceOf(element))!, document.baseURI).href);
    const answer = await ask<unknown[]>('webpp:relocate', { urls, failed, pageUrl: location.href.split('#')[0] }).catch(() => []);
    pending.forEach((element, i) => {
      const target = answer[i];
      if (typeof target !== 'string' || !element.isConnected) return;
      const copy = element.cloneNode(true) as Element;
      copy.setAttribute(sourceOf(element), target);
      moved.add(copy);
      element.replaceWith(copy);
    });
  };
  document.addEventListener(
    'error',
    (event) => {
      if (event.target instanceof HTMLObjectElement || event.target instanceof HTMLEmbedElement) void relocate([event.target], true);
    },
    true,
  );
  const scan = (): void => void relocate([...document.querySelectorAll('object[data], embed[src]')], false);
  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', scan, { once: true });
  else scan();

  // What the page loaded itself, for the worker (sw/src/direct.ts): the worker leaves some
  // same-origin requests to the browser and learns the own origin's times from their Resource
  // Timing entries; an element that failed to load keeps this page's requests with the worker.
  // Posted after the page's `load` (below), then as the browser batches the entries, only while a
  // worker controls the page; a failed element's report goes at once.
  // Each entry as [name, requestStart, responseStart, responseEnd, transferSize, encodedBodySize,
  // decodedBodySize, responseStatus] (direct.ts parsePageTiming).
  const failed: string[] = [];
  const report = (entries: PerformanceResourceTiming[]): void => {
    const own = entries
      .filter((entry) => entry.name.startsWith(location.origin + '/'))
      .map((e) => [e.name, e.requestStart, e.responseStart, e.responseEnd, e.transferSize, e.encodedBodySize, e.decodedBodySize, (e as { responseStatus?: number }).responseStatus ?? 0]);
    if (own.length + failed.length === 0) return;
    container?.controller?.postMessage({ type: 'webpp:timing', entries: own, failed: failed.splice(0) });
  };
  // A failed own-origin image or stylesheet is loaded once more at once, in its `error` event
  // (or, when it failed before this async script ran, when the script starts), once per
  // element: the page's `load` then waits for the second load. The worker takes a page's
  // second request for a URL it had left to the browser (direct.ts), so the second load has
  // its failover. Scripts are never left to the browser: one that failed would be skipped and
  // the page's later scripts would run without it (docs/service-worker.md).
  const retried = moved; // (never the same elements: those are <object> and <embed>)
  const loadAgain = (element: Element): void => {
    if (retried.has(element)) return;
    retried.add(element);
    if (element instanceof HTMLImageElement) {
      // Setting src or srcset, even to the same value, makes the image select and load again.
      for (const name of ['srcset', 'src']) {
        const value = element.getAttribute(name);
        if (value !== null) element.setAttribute(name, value);
      }
    } else if (element instanceof HTMLLinkElement && element.rel === 'stylesheet' && element.isConnected) {
      const copy = element.cloneNode() as Element;
      retried.add(copy);
      element.replaceWith(copy);
    }
  };
  if (container) {
    // After `load`: the entries buffered so far in one report (the browser keeps 250), then as
    // the browser batches them.
    afterLoad(() => {
      try {
        new PerformanceObserver((list) => report(list.getEntries() as PerformanceResourceTiming[])).observe({ type: 'resource', buffered: true });
      } catch {
        // No PerformanceObserver: the worker keeps its exploration requests only.
      }
    });
    const ownUrl = (element: Element): string | undefined => {
      const target = element as Element & { currentSrc?: unknown; src?: unknown; href?: unknown };
      const url = target.currentSrc || target.src || target.href;
      return typeof url === 'string' && url.startsWith(location.origin + '/') ? url : undefined;
    };
    const failedElement = (element: Element): void => {
      const url = ownUrl(element);
      if (url === undefined) return;
      failed.push(url);
      if (container.controller) loadAgain(element);
      report([]);
    };
    document.addEventListener('error', (event) => failedElement(event.target as Element), true);
    // Images and stylesheets that failed before this async script listened: the last Resource
    // Timing entry of the URL has no status (a network error) or an error status, and a broken
    // image is complete without a size (Chromium gives a failed stylesheet an empty sheet).
    for (const element of document.querySelectorAll('img, link[rel=stylesheet]')) {
      const url = ownUrl(element);
      const status = url === undefined ? undefined : (performance.getEntriesByName(url).pop() as { responseStatus?: number } | undefined)?.responseStatus;
      const image = element instanceof HTMLImageElement;
      if ((status === 0 || (status ?? 0) >= 400) && (!image || (element.complete && element.naturalWidth === 0))) failedElement(element);
    }
  }

  window.webpp = {
    version: '0.1.0',
    ready,
    controlled: () =>
      new Promise<void>((resolve) => {
        if (!container || container.controller) return resolve();
        container.addEventListener('controllerchange', () => resolve(), { once: true });
      }),
    state: () => ask<WorkerStateSnapshot>('webpp:state'),
    flush: () => ask<unknown>('webpp:flush').then(() => undefined),
    on: (type, listener) => {
      listen();
      let set = listeners.get(type);
      if (!set) listeners.set(type, (set = new Set()));
      set.add(listener);
      return () => void set.delete(listener);
    },
  };
})();
