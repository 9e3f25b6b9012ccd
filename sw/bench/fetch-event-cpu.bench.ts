/**
 * CPU time of the worker's synchronous fetch event (issue 26: every fetch event is a hop to
 * the worker's thread, and the page's requests wait while that thread is busy): what the
 * bundled worker's fetch listener does before it returns (webpp-sw.ts: route → plan → attempt
 * → the first fetch, or the direct route's decision), per event, for
 *
 *   navigation  a bound navigation (navigation preload on, the own origin preferred);
 *   bound       a bound subresource the worker answers (respondWith);
 *   direct      a bound subresource left to the browser (direct.ts: no respondWith).
 *
 * Real objects (ReplicaClient with the default options, the webpp policy, core's engine), in
 * Node: fetch() is a stub that answers after a few milliseconds per server (its Resource
 * Timing entry follows, through a stand-in PerformanceObserver), so the policy learns, the
 * ledger and the connection queue end their flights, and the direct route's pages get their
 * proof of life as in a browser. Pages are loaded one after another: a navigation, then a
 * burst of subresource events, then their answers. Each event's CPU time is
 * process.cpuUsage() around the listener's call; the platform's own costs (Chromium's Request,
 * AbortController, fetch) are not Node's, so compare builds with this, and judge absolute
 * figures in Chromium traces.
 *
 *   npm run bench fetch-event-cpu                 # prints; docs/benchmarks/fetch-event-cpu.json with --write
 *   node --import tsx sw/bench/fetch-event-cpu.bench.ts --root /path/to/other/checkout   # another build's dist (A/B)
 *
 * Options: --pages N (default 300, the first 60 unmeasured), --root DIR (a checkout whose
 * sw/dist and packages/core/dist are built; default this one), --json (one line of JSON),
 * --write (docs/benchmarks/fetch-event-cpu.json).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

// The worker's modules, typed here as far as this bench uses them (sw/src needs the WebWorker lib, this program has DOM).
/** A FetchEvent as the listener reads it (request, clientId, resultingClientId, respondWith, waitUntil, preloadResponse). */
type FakeEvent = object;
type Fetcher = (request: Request) => Promise<Response>;
interface ClientModule {
  ReplicaClient: new (options: Record<string, unknown>) => {
    ready: Promise<void>;
    bindings: { learn(headers: Headers): unknown };
    handleFetch(event: FakeEvent, fetcher: Fetcher, preferred?: string): boolean;
    snapshot(): { counters: Record<string, number> };
    engine: { stop(): void };
  };
}
interface PreloadModule {
  NavigationPreload: new (registration: unknown, allowed: boolean, plainFetch: Fetcher) => { fetchFor(event: FakeEvent): Fetcher; preferredFor(event: FakeEvent): string | undefined };
}
interface StorageModule {
  memoryKeyValueStore: () => unknown;
}
type CoreModule = typeof import('@webpp/core');

const args = process.argv.slice(2);
const option = (name: string): string | undefined => {
  const index = args.indexOf(`--${name}`);
  return index === -1 ? undefined : args[index + 1];
};
const repoRoot = new URL('../../', import.meta.url).pathname;
const root = option('root') ?? repoRoot;
const PAGES = Number(option('pages') ?? 300);
const WARMUP_PAGES = Math.min(60, Math.floor(PAGES / 5));
const SUBRESOURCES = 24;
const OUTPUT = join(repoRoot, 'docs/benchmarks/fetch-event-cpu.json');

const ORIGINS = ['http://a.localhost:8081', 'http://b.localhost:8082', 'http://c.localhost:8083'] as const;
const SELF = ORIGINS[0];
/** Each server's time to first byte (ms): the own origin a little faster, so that its subresources go direct. */
const TTFB_MS: Record<string, number> = { [ORIGINS[0]]: 2, [ORIGINS[1]]: 3, [ORIGINS[2]]: 4 };

/** A seeded random source (mulberry32): the same draws for every build. */
function seeded(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** A stand-in for the worker's PerformanceObserver of 'resource' entries: the stub fetch posts them. */
type Entry = Record<string, number | string>;
const observers: ((entries: Entry[]) => void)[] = [];
class StubObserver {
  static readonly supportedEntryTypes = ['resource'];
  constructor(private readonly callback: (list: { getEntries(): Entry[] }) => void) {}
  observe(): void {
    observers.push((entries) => this.callback({ getEntries: () => entries }));
  }
}
(globalThis as { PerformanceObserver?: unknown }).PerformanceObserver = StubObserver;

async function main(): Promise<void> {
  const load = async <T>(path: string): Promise<T> => (await import(pathToFileURL(join(root, path)).href)) as T;
  const { ReplicaClient } = await load<ClientModule>('sw/dist/replica-client.js');
  const { NavigationPreload } = await load<PreloadModule>('sw/dist/navigation-preload.js');
  const { memoryKeyValueStore } = await load<StorageModule>('sw/dist/storage.js');
  const { BINDINGS_HEADER, encodeBindings } = await load<CoreModule>('packages/core/dist/index.js');

  const bindingsHeader = encodeBindings({ directoryVersion: 1, bindings: [{ logical: `${SELF}/`, prefix: true, replicas: ORIGINS.map((origin) => `${origin}/`) }] }).value;
  const jitter = seeded(7);
  const stubFetch = (request: Request): Promise<Response> => {
    const sentAtMs = performance.now();
    const { origin } = new URL(request.url);
    const ttfbMs = (TTFB_MS[origin] ?? 3) * (0.8 + 0.4 * jitter());
    return new Promise((resolve) => {
      setTimeout(() => {
        const headers = new Headers({ 'content-type': 'text/plain', 'content-length': '800', 'timing-allow-origin': '*' });
        if (origin === SELF) headers.set(BINDINGS_HEADER, bindingsHeader);
        resolve(new Response(request.method === 'HEAD' ? null : 'x'.repeat(800), { status: 200, headers }));
        const responseStart = performance.now();
        setTimeout(() => {
          const entry: Entry = { name: request.url, startTime: sentAtMs, requestStart: sentAtMs + 0.1, responseStart, responseEnd: performance.now(), transferSize: 1100, encodedBodySize: 800, decodedBodySize: 800, nextHopProtocol: 'http/1.1', initiatorType: 'fetch' };
          for (const deliver of observers) deliver([entry]);
        }, 1);
      }, ttfbMs);
    });
  };
  (globalThis as { fetch: unknown }).fetch = stubFetch;

  const client = new ReplicaClient({
    selfOrigin: SELF,
    storage: memoryKeyValueStore(),
    fetch: stubFetch,
    random: seeded(1),
    unregister: async () => undefined,
    notifyPages: async () => undefined,
    ownScriptPaths: ['/webpp.js', '/webpp-sw.js'],
  });
  await client.ready;
  client.bindings.learn(new Headers({ [BINDINGS_HEADER]: bindingsHeader }));
  const registration = { navigationPreload: { enable: async () => undefined, disable: async () => undefined } };
  const navigationPreload = new NavigationPreload(registration, true, stubFetch);

  // The bundled worker's fetch listener (webpp-sw.ts), less the page script's copy.
  const listener = (event: FakeEvent): boolean => client.handleFetch(event, navigationPreload.fetchFor(event), navigationPreload.preferredFor(event));

  const cpu: Record<'navigation' | 'bound' | 'direct', number[]> = { navigation: [], bound: [], direct: [] };
  const fakeEvent = (request: Request, clientId: string, resultingClientId: string, answers: Promise<unknown>[], preload?: Promise<Response>): FakeEvent =>
    ({
      request,
      clientId,
      resultingClientId,
      ...(preload ? { preloadResponse: preload } : {}),
      respondWith: (answer: Promise<Response>) => void answers.push(answer.then((response) => response.text())),
      waitUntil: (promise: Promise<unknown>) => void answers.push(promise.catch(() => undefined)),
    });
  const requestOf = (url: string, mode: string, destination: string): Request => {
    const request = new Request(url, mode === 'navigate' ? { headers: { accept: 'text/html' } } : { mode: 'no-cors' });
    Object.defineProperty(request, 'mode', { value: mode });
    Object.defineProperty(request, 'destination', { value: destination });
    return request;
  };
  /** One event through the listener, its CPU time (µs) noted under its kind when measured. */
  // Two named callers, so that a CPU profile (node --cpu-prof) tells navigations from subresources.
  function navigationEvent(event: FakeEvent): boolean {
    return listener(event);
  }
  function subresourceEvent(event: FakeEvent): boolean {
    return listener(event);
  }
  const dispatch = (event: FakeEvent, measured: boolean, navigation: boolean): void => {
    const before = process.cpuUsage();
    const answered = navigation ? navigationEvent(event) : subresourceEvent(event);
    const used = process.cpuUsage(before);
    if (measured) cpu[navigation ? 'navigation' : answered ? 'bound' : 'direct'].push(used.user + used.system);
  };

  for (let page = 0; page < PAGES; page++) {
    const measured = page >= WARMUP_PAGES;
    const pageId = `page-${page}`;
    const url = `${SELF}/site/p${page % 6}/index.html`;
    const answers: Promise<unknown>[] = [];
    const navigation = requestOf(url, 'navigate', 'document');
    dispatch(fakeEvent(navigation, '', pageId, answers, stubFetch(new Request(url))), measured, true);
    await Promise.all(answers.splice(0));
    await new Promise((resolve) => setTimeout(resolve, 3));
    for (let index = 0; index < SUBRESOURCES; index++) {
      const destination = index < 4 ? 'style' : index < 6 ? 'script' : 'image';
      dispatch(fakeEvent(requestOf(`${SELF}/site/p${page % 6}/asset-${index}.${destination === 'image' ? 'png' : destination === 'style' ? 'css' : 'js'}`, 'no-cors', destination), pageId, '', answers), measured, false);
    }
    await Promise.all(answers.splice(0));
    await new Promise((resolve) => setTimeout(resolve, 5));
  }

  const summary = (values: number[]): { events: number; median_us: number; p90_us: number; mean_us: number } => {
    const sorted = [...values].sort((a, b) => a - b);
    const at = (q: number): number => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? Number.NaN;
    return { events: values.length, median_us: at(0.5), p90_us: at(0.9), mean_us: Math.round(values.reduce((a, b) => a + b, 0) / Math.max(1, values.length)) };
  };
  const result = {
    what: 'CPU time of the synchronous fetch event (process.cpuUsage around the listener), Node, real ReplicaClient, stub fetch',
    root,
    node: process.version,
    load_average: loadavg().map((value) => Math.round(value * 100) / 100),
    pages: PAGES - WARMUP_PAGES,
    navigation: summary(cpu.navigation),
    bound: summary(cpu.bound),
    direct: summary(cpu.direct),
    counters: client.snapshot().counters,
  };
  if (args.includes('--json')) console.log(JSON.stringify(result));
  else console.log(JSON.stringify(result, null, 2));
  if (args.includes('--write')) {
    mkdirSync(join(repoRoot, 'docs/benchmarks'), { recursive: true });
    writeFileSync(OUTPUT, `${JSON.stringify(result, null, 2)}\n`);
  }
  client.engine.stop();
}

await main();
process.exit(0);
