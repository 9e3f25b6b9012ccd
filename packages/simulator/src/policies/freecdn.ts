/**
 * A model of freecdn's replica choice (npm `freecdn-js` 0.4.1, dist/freecdn-main.js), so the
 * simulator can compare with it at scale; the Chromium evaluation runs the real package.
 *
 * - A host's weight (`getHostWeight`): 50 until Resource Timing has reported a request to
 *   it, then max(100 − 0.2 · reqTimeAvg, 10), where reqTimeAvg is the cumulative mean of
 *   responseStart − requestStart over every completed request to the host (`parseEntries`:
 *   reqTimeSum / reqNum, never decayed). A response counts whatever its status, when it has
 *   ended; failed and aborted fetches do not.
 * - A file's URLs are tried best weight first (`getNextUrl`: the first strictly greater
 *   weight, weights read at each pick, the chosen URL swapped with the last and removed).
 * - After a network error or a status other than 200 (`valid_status=200`) the next URL
 *   starts at once (`urlLoader.onError` → `loadNextUrl`); a body cut mid-way restarts
 *   elsewhere, its bytes counted from the start.
 * - With no response head after `open_timeout` (10 s by default, DEFAULT_PARAMS) the next
 *   URL starts beside the first (`ParamOpenTimeout`); the first body to end wins and the
 *   others are aborted (`urlLoader.onEnd` → `abort('TASK_DONE')`).
 * - No body timeout (`recv_timeout` is not a default), and all replicas are CDN hosts here
 *   (the site's own URL, weight −1, is not a replica). `getUrlWeight`'s per-URL boost
 *   (`100 + expire`) is left out: it applies only to URLs whose cached entry has expired.
 * One table per browser: every client of a run shares it.
 */
import type { Policy, PolicyEnvironment, RequestResult } from '../policy.js';
import type { ExchangeHandle } from '../network.js';

/** freecdn's DEFAULT_PARAMS `open_timeout=10s`. */
export const FREECDN_OPEN_TIMEOUT_MS = 10_000;
/** getHostWeight's score before a host has a sample. */
const UNMEASURED_WEIGHT = 50;

interface HostInfo {
  reqNum: number;
  reqTimeSum: number;
}

/** getHostWeight: max(100 − 0.2 · cumulative mean first byte, 10), 50 while unmeasured. */
export function freecdnHostWeight(info: HostInfo | undefined): number {
  if (!info || info.reqNum === 0) return UNMEASURED_WEIGHT;
  return Math.max(100 - (info.reqTimeSum / info.reqNum) * 0.2, 10);
}

export function freecdnPolicy(): Policy {
  return {
    name: 'freecdn',
    description: 'freecdn-js 0.4.1: cumulative mean first byte per host, sequential failover, a parallel try after 10 s without a head',
    start(environment) {
      const hosts = new Map<string, HostInfo>();
      const observe = (server: string, ttfbMs: number): void => {
        const info = hosts.get(server) ?? { reqNum: 0, reqTimeSum: 0 };
        info.reqNum++;
        info.reqTimeSum += ttfbMs;
        hosts.set(server, info);
      };
      return { client: () => ({ request: (request, done) => loadFile(environment, hosts, observe, request.sizeBytes, request.key, done) }) };
    },
  };
}

function loadFile(
  environment: PolicyEnvironment,
  hosts: Map<string, HostInfo>,
  observe: (server: string, ttfbMs: number) => void,
  sizeBytes: number,
  key: string,
  done: (result: RequestResult) => void,
): () => void {
  const { network, queue } = environment;
  const urls = [...environment.servers];
  const loaders = new Set<ExchangeHandle>();
  let tried = 0;
  let finished = false;
  let openTimer: ReturnType<typeof queue.after> | undefined;
  const finish = (result: RequestResult): void => {
    if (finished) return;
    finished = true;
    if (openTimer) queue.cancel(openTimer);
    for (const loader of loaders) loader.cancel();
    loaders.clear();
    done(result);
  };
  const nextUrl = (): string | undefined => {
    let weight = Number.NEGATIVE_INFINITY;
    let index = -1;
    urls.forEach((url, i) => {
      const w = freecdnHostWeight(hosts.get(url));
      if (w > weight) [weight, index] = [w, i];
    });
    if (index < 0) return undefined;
    const url = urls[index]!;
    urls[index] = urls[urls.length - 1]!;
    urls.length--;
    return url;
  };
  const loadNextUrl = (): void => {
    if (finished) return;
    const server = nextUrl();
    if (server === undefined) {
      if (loaders.size === 0) finish({ ok: false, failure: 'no-replica' });
      return;
    }
    // responseStart − requestStart: requestStart is when a connection took the request (onSent).
    let requestStartMs = queue.now();
    let headAtMs: number | undefined;
    let status = 200;
    const purpose = tried++ === 0 ? 'request' : 'retry';
    if (openTimer) queue.cancel(openTimer);
    openTimer = queue.after(FREECDN_OPEN_TIMEOUT_MS, () => {
      openTimer = undefined;
      if (headAtMs === undefined) loadNextUrl();
    });
    const failed = (): void => {
      loaders.delete(handle);
      loadNextUrl();
    };
    const handle = network.send(
      { server, method: 'GET', bodyBytes: sizeBytes, key, purpose },
      {
        onSent: (atMs) => {
          requestStartMs = atMs;
        },
        onFirstByte: (atMs, _pushed, headStatus = 200) => {
          headAtMs = atMs;
          status = headStatus;
          if (openTimer) queue.cancel(openTimer);
          openTimer = undefined;
        },
        onComplete: () => {
          // Resource Timing reports the ended response, whatever its status.
          if (headAtMs !== undefined) observe(server, headAtMs - requestStartMs);
          if (status !== 200) return failed();
          loaders.delete(handle);
          finish({ ok: true, server });
        },
        onError: () => failed(),
      },
    );
    loaders.add(handle);
  };
  loadNextUrl();
  return () => {
    finished = true;
    if (openTimer) queue.cancel(openTimer);
    for (const loader of loaders) loader.cancel();
  };
}
