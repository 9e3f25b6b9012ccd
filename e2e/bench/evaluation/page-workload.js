// The paper's client workload (Section 6.1), run inside a bench page: `clients` loops, each
// sending GETs one after another, cycling through the file sizes from its own offset, for
// `durationMs` (no new request starts after that) and at most `maxRequestsPerClient` each.
// A response time is measured in the page, from fetch() to the body fully read. A request
// fails when fetch() rejects, the status is not 2xx, the body is short, or nothing complete
// arrived within `requestTimeoutMs`; a failed request is followed by `failurePauseMs`.
//
// Modes:
//   "worker":   fetch(logical URL); the page's Service Worker binds it (the policy under test).
//   "parallel": no worker; fetch the physical URL from every replica at once, the first
//               complete body wins and the others are aborted (the paper's "optimal",
//               which waits for a complete response).
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
      const { tag, mode, clients, fileSizesBytes, durationMs, maxRequestsPerClient, requestTimeoutMs, failurePauseMs, thinkTimeMs, startAtEpochMs, origins } = options;
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
          const controller = new AbortController();
          const timer = setTimeout(() => controller.abort(), requestTimeoutMs);
          const sentMs = performance.now();
          let ok = false;
          let error = null;
          try {
            if (mode === 'parallel') await fetchFirstComplete(origins.map((origin) => origin + path), sizeBytes, controller.signal);
            else await fetchComplete(path, sizeBytes, controller.signal);
            ok = true;
          } catch (caught) {
            error = controller.signal.aborted ? 'timeout' : String(caught && caught.message ? caught.message : caught);
          }
          clearTimeout(timer);
          const responseMs = performance.now() - sentMs;
          records.push({ client: c, index: i, sizeBytes, startMs, responseMs, ok, error });
          const pauseMs = ok ? thinkTimeMs : Math.max(thinkTimeMs, failurePauseMs);
          if (pauseMs > 0) await sleep(pauseMs);
        }
      };
      await Promise.all(Array.from({ length: clients }, (_, c) => client(c)));
      return { records, elapsedMs: performance.now() - t0 };
    },
  };
})();
