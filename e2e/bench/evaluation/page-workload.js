// The paper's client workload (Section 6.1), run inside a bench page: `clients` loops, each
// sending GETs one after another, cycling through the file sizes from its own offset, for
// `durationMs` (no new request starts after that) and at most `maxRequestsPerClient` each.
// A response time is measured in the page, from fetch() to the body fully read. A request
// fails when fetch() rejects, the status is not 2xx, the body is short, or nothing complete
// arrived within `requestTimeoutMs`; a failed request is followed by `failurePauseMs`.
//
// Modes:
//   "worker":   fetch(logical URL); the page's Service Worker binds it (the policy under test).
//   "freecdn":  the same, with freecdn-js's worker controlling the page.
//   "direct":   no worker; fetch the physical URL from one replica (`directOrigin`).
//   "parallel": no worker; fetch the physical URL from every replica at once, the first
//               complete body wins and the others are aborted (the paper's "optimal",
//               which waits for a complete response).
//
// runPages() runs a generated world's workload (issue 22 §1): each client loads its pages
// one after another, a page's resources all at once (the browser queues them on its
// connections), then thinks; a page's time is from its start to its last body.
//
// Injected with page.addScriptTag({ content }) as plain JavaScript (no bundler helpers).
(() => {
  if (window.__webppBench) return;
  const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
  const events = { decisions: [], refreshes: 0, probes: 0, failedRefreshes: 0, failedProbes: 0, resumes: 0, failedResumes: 0, listening: false };

  async function fetchComplete(url, sizeBytes, signal) {
    const response = await fetch(url, { cache: 'no-store', signal });
    const body = await response.arrayBuffer();
    if (!response.ok) throw new Error(`status ${response.status}`);
    if (body.byteLength !== sizeBytes) throw new Error(`short body: ${body.byteLength} of ${sizeBytes} bytes`);
    return response.status;
  }

  async function fetchFirstComplete(urls, sizeBytes, signal) {
    const losers = new AbortController();
    const onAbort = () => losers.abort();
    signal.addEventListener('abort', onAbort, { once: true });
    try {
      return await Promise.any(urls.map((url) => fetchComplete(url, sizeBytes, losers.signal)));
    } catch (error) {
      throw error instanceof AggregateError ? (error.errors[0] ?? error) : error;
    } finally {
      signal.removeEventListener('abort', onAbort);
      losers.abort();
    }
  }

  /** One request in any mode; resolves when the complete body is in, throws otherwise. */
  function fetchByMode(mode, path, sizeBytes, signal, origins, directOrigin) {
    if (mode === 'parallel') return fetchFirstComplete(origins.map((origin) => origin + path), sizeBytes, signal);
    if (mode === 'direct') return fetchComplete(directOrigin + path, sizeBytes, signal);
    return fetchComplete(path, sizeBytes, signal);
  }

  /** fetchByMode with a timeout; the record of one page request. */
  async function timedRequest(mode, path, sizeBytes, requestTimeoutMs, origins, directOrigin) {
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(), requestTimeoutMs);
    const sentMs = performance.now();
    let ok = false;
    let error = null;
    try {
      await fetchByMode(mode, path, sizeBytes, controller.signal, origins, directOrigin);
      ok = true;
    } catch (caught) {
      error = controller.signal.aborted ? 'timeout' : String(caught && caught.message ? caught.message : caught);
    }
    clearTimeout(timer);
    return { responseMs: performance.now() - sentMs, ok, error };
  }

  window.__webppBench = {
    /** Collects the worker's live events for this policy's requests (call once the page is controlled). */
    listen(tag) {
      if (events.listening || !window.webpp) return false;
      events.listening = true;
      const mine = (url) => typeof url === 'string' && url.includes(`p=${tag}&`);
      window.webpp.on('decision', (event) => {
        const decision = event.decision;
        if (!mine(decision.logicalUrl)) return;
        events.decisions.push({
          url: decision.logicalUrl,
          outcome: decision.outcome,
          servedBy: decision.servedBy ?? null,
          attempts: decision.attempts.map((attempt) => ({ server: attempt.server, outcome: attempt.outcome, startedAfterMs: attempt.startedAfterMs, ttfbMs: attempt.ttfbMs ?? null })),
        });
      });
      window.webpp.on('refresh', (event) => {
        if (!mine(event.url)) return;
        events.refreshes++;
        if (!event.ok) events.failedRefreshes++;
      });
      // A body that broke off mid-stream and was continued (Range request) from another replica.
      window.webpp.on('body-resumed', (event) => {
        if (!mine(event.logicalUrl)) return;
        events.resumes++;
        if (!event.ok) events.failedResumes++;
      });
      window.webpp.on('probe', (event) => {
        if (!mine(event.url)) return;
        events.probes++;
        if (!event.recovered) events.failedProbes++;
      });
      return true;
    },

    events() {
      return events;
    },

    async run(options) {
      const { tag, mode, clients, fileSizesBytes, durationMs, maxRequestsPerClient, requestTimeoutMs, failurePauseMs, thinkTimeMs, startAtEpochMs, origins, directOrigin } = options;
      const waitMs = startAtEpochMs - Date.now();
      if (waitMs > 0) await sleep(waitMs);
      const t0 = performance.now();
      const records = [];
      const client = async (c) => {
        for (let i = 0; i < maxRequestsPerClient; i++) {
          const startMs = performance.now() - t0;
          if (startMs >= durationMs) break;
          const sizeBytes = fileSizesBytes[(i + c) % fileSizesBytes.length];
          // The same URL for every request of a client to a file, as in the paper's workload:
          // a policy may learn from earlier responses to it (the worker's size memory). The
          // tag tells the emulators which policy and client sent it.
          const path = `/files/${sizeBytes}.bin?p=${tag}&c=${c}`;
          const { responseMs, ok, error } = await timedRequest(mode, path, sizeBytes, requestTimeoutMs, origins, directOrigin);
          records.push({ client: c, index: i, sizeBytes, startMs, responseMs, ok, error });
          const pauseMs = ok ? thinkTimeMs : Math.max(thinkTimeMs, failurePauseMs);
          if (pauseMs > 0) await sleep(pauseMs);
        }
      };
      await Promise.all(Array.from({ length: clients }, (_, c) => client(c)));
      return { records, elapsedMs: performance.now() - t0 };
    },

    /**
     * A generated world's pages: `clients` is client → page → [{ url, sizeBytes }]. No page
     * starts after `durationMs` (a bound: the pages not started are not in the records).
     */
    async runPages(options) {
      const { tag, mode, clients, durationMs, requestTimeoutMs, thinkTimeMs, startAtEpochMs, origins, directOrigin } = options;
      const waitMs = startAtEpochMs - Date.now();
      if (waitMs > 0) await sleep(waitMs);
      const t0 = performance.now();
      const records = [];
      const pages = [];
      const client = async (pagesOfClient, c) => {
        for (const [p, resources] of pagesOfClient.entries()) {
          const startMs = performance.now() - t0;
          if (startMs >= durationMs) break;
          const results = await Promise.all(
            resources.map(async (resource, index) => {
              const path = `/files${resource.url}${resource.url.includes('?') ? '&' : '?'}p=${tag}&c=${c}`;
              const result = await timedRequest(mode, path, resource.sizeBytes, requestTimeoutMs, origins, directOrigin);
              records.push({ client: c, page: p, index, url: resource.url, sizeBytes: resource.sizeBytes, startMs, ...result });
              return result.ok;
            }),
          );
          pages.push({ client: c, page: p, startMs, pageMs: performance.now() - t0 - startMs, ok: results.every(Boolean) });
          if (thinkTimeMs > 0) await sleep(thinkTimeMs);
        }
      };
      await Promise.all(clients.map((pagesOfClient, c) => client(pagesOfClient, c)));
      return { records, pages, elapsedMs: performance.now() - t0 };
    },
  };
})();
