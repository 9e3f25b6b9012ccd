/**
 * The smart client of Web++ (paper Section 3) as one object that both integration paths
 * share: the bundled worker (webpp-sw.ts) and the Workbox strategy (workbox.ts).
 *
 *  - route(request), synchronous and cheap, says whether the worker should answer at all:
 *    requests without bindings pass through untouched (no respondWith);
 *  - respond(request, io) binds a logical URL to the best replica (policy.ts), runs the
 *    attempts with timeouts and failover (attempt-runner.ts), learns bindings from every
 *    response, feeds time-to-first-byte samples to the shared latency table, and schedules
 *    the asynchronous refreshes and probes (maintenance.ts) inside event.waitUntil;
 *  - anything unexpected in its own logic falls back to a plain fetch (fail open).
 */
import { CONTROL_HEADER, serverOf } from '@webpp/core';
import type { RandomSource, ResolvedBinding, ServerId } from '@webpp/core';
import { classifyStatus, runAttempts } from './attempt-runner.js';
import type { AttemptSpec, RunnerIO } from './attempt-runner.js';
import { BindingsStore } from './bindings-store.js';
import { resolveWorkerOptions } from './config.js';
import type { ParsedWorkerOptions, WorkerOptions } from './config.js';
import { navigationErrorPage } from './error-page.js';
import { LatencyStore } from './latency-store.js';
import { Maintenance } from './maintenance.js';
import { CONTROL_OFF_MESSAGE, EVENT_CHANNEL, FLUSH_REQUEST, STATE_REQUEST } from './messages.js';
import type { AttemptOutcome, DecisionRecord, WebppEvent, WorkerStateSnapshot } from './messages.js';
import { buildPhysicalRequest, buildProbeRequest, isSameOrigin } from './physical-request.js';
import { createPolicy, extendedRefreshPolicy } from './policy.js';
import type { ReplicaPolicy } from './policy.js';
import { servedResponse } from './served-response.js';
import { StateReporter, serverView, serverViews } from './state-reporter.js';
import { CONTROL_KEY, idbKeyValueStore } from './storage.js';
import type { KeyValueStore } from './storage.js';
import { TtfbSampler } from './ttfb-sampler.js';
import { SW_VERSION } from './version.js';

/** How the worker handles a request. */
export type Route =
  /** The logical URL has bindings: bind it to a replica. */
  | 'bind'
  /** Same-origin navigation, fetch() or stylesheet without bindings: fetch as is, read its bindings. */
  | 'observe'
  /** The stored state is still loading (worker just started): decide once it is there. */
  | 'wait'
  /** Not the worker's business: let the browser handle it (no respondWith). */
  | 'pass';

/** What the caller of respond() provides: how to fetch, and how to extend the event's life. */
export interface RespondIO {
  fetch(request: Request): Promise<Response>;
  waitUntil(promise: Promise<unknown>): void;
}

export interface ReplicaClientOptions {
  /** Parsed options (from the worker's URL); or `settings` to resolve them here. */
  parsed?: ParsedWorkerOptions;
  settings?: Parameters<typeof resolveWorkerOptions>[0];
  /** The page origin the worker serves; default: the worker's own origin. */
  selfOrigin?: string;
  storage?: KeyValueStore;
  /** Overrides the policy named in the options. */
  policy?: ReplicaPolicy;
  /** Fetch used for refreshes and probes (default: global fetch). */
  fetch?: (request: Request) => Promise<Response>;
  random?: RandomSource;
  /** Publishes live events (default: BroadcastChannel 'webpp' when available). */
  publish?: (events: WebppEvent[]) => void;
  /** Unregisters the worker on `webpp-control: off` (default: self.registration.unregister()). */
  unregister?: () => Promise<unknown>;
  /** Tells every open page of the site that the worker was switched off (default: clients.matchAll + postMessage). */
  notifyPages?: (message: { type: typeof CONTROL_OFF_MESSAGE }) => Promise<unknown>;
  /** Watch the worker's Resource Timing entries to leave HTTP-cache hits out of the samples. Default true. */
  observeResourceTiming?: boolean;
}

/** Same-origin requests without bindings that are still worth reading bindings from. */
const OBSERVED_DESTINATIONS = new Set(['', 'document', 'iframe', 'style']);
/** Recent physical URLs remembered per server, for probes ("a randomly chosen resource"). */
const PROBE_URLS_PER_SERVER = 8;
const MAX_STALE_MEMO = 1_000;

function isFailureOutcome(outcome: AttemptOutcome): boolean {
  return outcome === 'timeout' || outcome === 'network-error' || outcome === 'server-error' || outcome === 'stale';
}

export class ReplicaClient {
  readonly options: WorkerOptions;
  readonly configErrors: string[];
  readonly policy: ReplicaPolicy;
  readonly latency: LatencyStore;
  readonly bindings: BindingsStore;
  readonly reporter: StateReporter;
  /** Resolves when the stored table and bindings are loaded (never rejects). */
  readonly ready: Promise<void>;
  private loaded = false;
  private enabled = true;
  private readonly selfOrigin: string;
  private readonly storage: KeyValueStore;
  private readonly random: RandomSource;
  private readonly sampler: TtfbSampler;
  private readonly maintenance: Maintenance;
  private readonly plainFetch: (request: Request) => Promise<Response>;
  private readonly unregister: () => Promise<unknown>;
  private readonly notifyPages: (message: { type: typeof CONTROL_OFF_MESSAGE }) => Promise<unknown>;
  private readonly startedAtMs = Date.now();
  private readonly resolvedByRequest = new WeakMap<Request, ResolvedBinding>();
  private readonly failureWatchers = new Map<ServerId, Set<() => void>>();
  private readonly probeUrls = new Map<ServerId, string[]>();
  private readonly staleMemo = new Map<string, number>();
  private messageListenerAttached = false;

  constructor(init: ReplicaClientOptions = {}) {
    const parsed = init.parsed ?? resolveWorkerOptions(init.settings);
    this.options = parsed.options;
    this.configErrors = [...parsed.errors];
    this.random = init.random ?? Math.random;
    const named = createPolicy(this.options.policy, { config: this.options.selection, random: this.random });
    if (!init.policy && !named) this.configErrors.push(`unknown policy "${this.options.policy}"; using "refresh"`);
    this.policy = init.policy ?? named ?? extendedRefreshPolicy();
    this.selfOrigin = init.selfOrigin ?? (globalThis as { location?: { origin: string } }).location?.origin ?? '';
    this.storage = init.storage ?? idbKeyValueStore();
    this.plainFetch = init.fetch ?? ((request) => fetch(request));
    this.unregister =
      init.unregister ??
      (() => (globalThis as unknown as { registration?: ServiceWorkerRegistration }).registration?.unregister() ?? Promise.resolve());

    this.notifyPages = init.notifyPages ?? defaultPageNotifier();
    this.reporter = new StateReporter({
      historySize: this.options.historySize,
      publish: init.publish ?? defaultPublisher(),
    });
    this.latency = new LatencyStore({
      config: this.options.selection,
      storage: this.storage,
      flushDelayMs: this.options.flushDelayMs,
      onFlushed: () => this.reporter.count('tableFlushes'),
    });
    this.bindings = new BindingsStore({ storage: this.storage, flushDelayMs: this.options.flushDelayMs });
    this.sampler = new TtfbSampler({
      now: () => performance.now(),
      sink: {
        record: (server, ttfbMs) => this.recordSample(server, ttfbMs, 'request'),
        skipped: () => this.reporter.count('cacheHitsSkipped'),
      },
    });
    if (init.observeResourceTiming !== false) this.sampler.observeResourceTiming();
    this.maintenance = new Maintenance({
      probeUrl: (server) => this.probeUrlFor(server),
      buildRequest: (url, signal) => buildProbeRequest(url, this.selfOrigin, signal),
      fetch: this.plainFetch,
      now: () => performance.now(),
      timeoutMs: (server) => this.latency.table.timeoutMs(server),
      probeSent: (server) => {
        this.latency.table.recordProbeSent(server);
        this.reporter.count('probes');
      },
      answered: (server, kind, url, ttfbMs, status) => {
        const wasFailed = this.latency.table.isFailed(server);
        this.recordSample(server, ttfbMs, kind);
        if (kind === 'refresh') {
          this.reporter.count('refreshes');
          this.reporter.event({ type: 'refresh', atMs: Date.now(), server, url, ok: true, status, ttfbMs: round(ttfbMs) });
        } else {
          if (wasFailed) this.reporter.count('recoveries');
          this.reporter.event({ type: 'probe', atMs: Date.now(), server, url, recovered: true, status, nextProbeInMs: null });
        }
      },
      unanswered: (server, kind, url, status) => {
        if (kind === 'refresh') {
          this.reporter.count('refreshes');
          this.markFailed(server, 'network-error');
          this.reporter.event({ type: 'refresh', atMs: Date.now(), server, url, ok: false, ...(status === undefined ? {} : { status }) });
        } else {
          const row = this.latency.table.get(server);
          const nextProbeInMs = row ? Math.max(0, row.nextProbeAtMs - Date.now()) : null;
          this.reporter.event({ type: 'probe', atMs: Date.now(), server, url, recovered: false, ...(status === undefined ? {} : { status }), nextProbeInMs });
        }
      },
    });

    this.ready = this.load();
  }

  /** True until the site switched the worker off. */
  get isEnabled(): boolean {
    return this.enabled;
  }

  /**
   * Synchronous and cheap: decides whether the worker answers this request at all. Called
   * for every request the page makes, so it does no more than a method check, a prefix
   * test and one bindings lookup.
   */
  route(request: Request): Route {
    if (!this.enabled) return 'pass';
    const { method } = request;
    if (method !== 'GET' && method !== 'HEAD') return 'pass';
    const { url } = request;
    if (!url.startsWith('http:') && !url.startsWith('https:')) return 'pass';
    if (!this.loaded) return 'wait';
    const resolved = this.bindings.resolve(url);
    if (resolved) {
      this.resolvedByRequest.set(request, resolved);
      return 'bind';
    }
    return this.isObservable(request) ? 'observe' : 'pass';
  }

  /**
   * Answers a request route() did not pass. Never rejects: an internal error falls back to
   * a plain fetch of the original request; a network failure of an unbound request becomes
   * a network error, as it would have been without the worker.
   */
  async respond(request: Request, io: RespondIO): Promise<Response> {
    this.reporter.count('intercepted');
    try {
      if (!this.loaded) await this.ready;
      const resolved = this.enabled
        ? (this.resolvedByRequest.get(request) ?? this.bindings.resolve(request.url))
        : undefined;
      if (resolved && (request.method === 'GET' || request.method === 'HEAD')) return await this.bind(request, resolved, io);
      if (this.enabled && this.isObservable(request)) return await this.observe(request, io);
      return await io.fetch(request).catch(() => Response.error());
    } catch (error) {
      this.reporter.count('internalErrors');
      this.reporter.event({ type: 'internal-error', atMs: Date.now(), message: String(error), url: request.url });
      return fetch(request).catch(() => Response.error());
    }
  }

  /** The state a page (dashboard, tests) asks for. */
  snapshot(): WorkerStateSnapshot {
    const nowMs = Date.now();
    return {
      type: 'webpp:state',
      version: SW_VERSION,
      enabled: this.enabled,
      startedAtMs: this.startedAtMs,
      nowMs,
      policy: this.policy.name,
      preset: this.options.preset,
      config: { ...this.options.selection },
      configErrors: [...this.configErrors],
      bindings: { count: this.bindings.size, directoryVersion: this.bindings.directoryVersion },
      servers: serverViews(this.latency.table, nowMs),
      table: this.latency.table.toJSON(),
      counters: { ...this.reporter.counters },
      decisions: this.reporter.recentDecisions(),
      events: this.reporter.recentEvents(),
    };
  }

  /** Writes pending table and bindings changes to IndexedDB now. */
  async flush(): Promise<void> {
    this.sampler.expire();
    await Promise.all([this.latency.flushNow(), this.bindings.flushNow()]);
  }

  /**
   * Answers the page script's messages ({type: 'webpp:state'} and {type: 'webpp:flush'},
   * replies on the transferred MessagePort). Idempotent.
   */
  attachMessageListener(scope: Pick<ServiceWorkerGlobalScope, 'addEventListener'>): void {
    if (this.messageListenerAttached) return;
    this.messageListenerAttached = true;
    scope.addEventListener('message', (event: ExtendableMessageEvent) => {
      const data: unknown = event.data;
      const port = event.ports[0];
      if (!port || typeof data !== 'object' || data === null) return;
      const type = (data as { type?: unknown }).type;
      if (type === STATE_REQUEST) {
        event.waitUntil(this.ready.then(() => port.postMessage(this.snapshot())));
      } else if (type === FLUSH_REQUEST) {
        event.waitUntil(this.ready.then(() => this.flush()).then(() => port.postMessage({ type: 'webpp:flushed' })));
      }
    });
  }

  // ---------------------------------------------------------------- binding

  private async bind(request: Request, resolved: ResolvedBinding, io: RespondIO): Promise<Response> {
    const arrivedMs = performance.now();
    const atMs = Date.now();
    this.reporter.count('bound');
    const table = this.latency.table;

    const physicalByServer = new Map<ServerId, string>();
    for (const url of resolved.physicalUrls) {
      const server = serverOf(url);
      if (!physicalByServer.has(server)) physicalByServer.set(server, url);
      this.rememberProbeUrl(server, url);
    }
    const candidates = [...physicalByServer.keys()];
    const planned = this.policy.plan({
      logicalUrl: resolved.logical,
      request,
      candidates,
      table,
      config: this.options.selection,
      random: this.random,
    });
    const specs: AttemptSpec[] = [];
    const demoted: AttemptSpec[] = [];
    for (const attempt of planned) {
      const physicalUrl = physicalByServer.get(attempt.server);
      if (physicalUrl === undefined) continue;
      const spec: AttemptSpec = { ...attempt, physicalUrl };
      // A replica that answered 404/410 for this directory version goes last (it may be back later).
      const staleAt = this.staleMemo.get(physicalUrl);
      (staleAt !== undefined && staleAt >= resolved.directoryVersion ? demoted : specs).push(spec);
    }
    specs.push(...demoted);
    const bindMs = performance.now() - arrivedMs;

    const mayBeCached = request.method === 'GET' && request.cache !== 'no-store' && request.cache !== 'reload';
    const runnerIO: RunnerIO = {
      fetch: io.fetch,
      now: () => performance.now(),
      buildRequest: (spec, signal) => buildPhysicalRequest(request, spec.physicalUrl, { selfOrigin: this.selfOrigin, signal }),
      onResponse: (spec, response, ttfbMs) => {
        const outcome = classifyStatus(response.status);
        if (outcome !== 'server-error') {
          this.sampler.add(spec.physicalUrl, spec.server, ttfbMs, mayBeCached && response.status !== 304);
          this.learnFrom(response, resolved.logical, io);
        }
        if (outcome === 'stale') this.noteStale(spec.physicalUrl, resolved.directoryVersion);
      },
      onServerFailure: (spec, outcome) => this.markFailed(spec.server, outcome),
      watchServerFailure: (server, onFailed) => this.watchServerFailure(server, onFailed),
    };

    const result = await runAttempts(specs, runnerIO, request.signal);
    io.waitUntil(this.afterRequest(candidates));

    const navigation = request.mode === 'navigate';
    const decision: DecisionRecord = {
      id: this.reporter.decisionId(),
      atMs,
      logicalUrl: resolved.logical,
      method: request.method,
      destination: request.destination,
      navigation,
      outcome: result.kind === 'served' ? 'served' : result.kind === 'aborted' ? 'aborted' : 'failed',
      failover: false,
      attempts: result.attempts,
      bindMs: round(bindMs),
      totalMs: 0,
      workerMs: 0,
      policy: this.policy.name,
    };
    for (const attempt of result.attempts) {
      if (!isFailureOutcome(attempt.outcome)) continue;
      decision.failover = true;
      this.reporter.count('failovers');
      if (attempt.outcome === 'stale') this.reporter.count('staleBindings');
      this.reporter.event({
        type: 'failover',
        atMs: Date.now(),
        logicalUrl: resolved.logical,
        from: attempt.server,
        outcome: attempt.outcome,
        ...(attempt.status === undefined ? {} : { status: attempt.status }),
      });
    }

    let response: Response;
    if (result.kind === 'served') {
      this.reporter.count('served');
      decision.servedBy = result.winner.server;
      decision.physicalUrl = result.winner.physicalUrl;
      decision.status = result.response.status;
      response = servedResponse(request, result.winner.physicalUrl, result.response);
    } else if (result.kind === 'failed' && result.fallback) {
      // Every replica failed, but one answered (e.g. 404 everywhere): that answer is the truth.
      this.reporter.count('failed');
      decision.servedBy = result.fallback.attempt.server;
      decision.physicalUrl = result.fallback.attempt.physicalUrl;
      decision.status = result.fallback.response.status;
      response = servedResponse(request, result.fallback.attempt.physicalUrl, result.fallback.response);
    } else {
      if (result.kind === 'failed') this.reporter.count('failed');
      response = navigation && result.kind === 'failed' ? navigationErrorPage(resolved.logical, result.attempts) : Response.error();
    }
    const totalMs = performance.now() - arrivedMs;
    const waitedMs = result.attempts.reduce((latest, attempt) => {
      const endMs = attempt.startedAfterMs + (attempt.ttfbMs ?? (attempt.outcome === 'timeout' ? attempt.timeoutMs : 0));
      return Math.max(latest, endMs);
    }, 0);
    decision.totalMs = round(totalMs);
    decision.workerMs = round(Math.max(0, totalMs - waitedMs));
    this.reporter.decision(decision);
    return response;
  }

  private async observe(request: Request, io: RespondIO): Promise<Response> {
    this.reporter.count('observed');
    let response: Response;
    try {
      response = await io.fetch(request);
    } catch {
      return Response.error();
    }
    if (response.type === 'basic' || response.type === 'default') this.learnFrom(response, request.url, io);
    return response;
  }

  /** After every bound request: asynchronous refreshes and probes (Figure 4), then a batched table write. */
  private async afterRequest(candidates: readonly ServerId[]): Promise<void> {
    try {
      this.sampler.expire();
      const plan = this.policy.maintenance?.({ candidates, table: this.latency.table, nowMs: Date.now() });
      if (plan && (plan.probe.length > 0 || plan.refresh.length > 0)) await this.maintenance.run(plan);
      await this.latency.changed();
    } catch {
      // Background work never affects a page.
    }
  }

  // ---------------------------------------------------------------- learning

  /** Reads the bindings and control headers of a response from the site or one of its replicas. */
  private learnFrom(response: Response, from: string, io: RespondIO): void {
    const { headers } = response;
    const control = headers.get(CONTROL_HEADER);
    if (control !== null && control.trim().toLowerCase() === 'off') {
      this.switchOff(from, io);
      return;
    }
    const learned = this.bindings.learn(headers);
    if (learned.kind === 'applied') {
      this.reporter.count('bindingsHeadersAccepted');
      if (learned.applied > 0) {
        io.waitUntil(this.bindings.changed());
        this.reporter.send({
          type: 'bindings',
          atMs: Date.now(),
          count: this.bindings.size,
          directoryVersion: this.bindings.directoryVersion,
          applied: learned.applied,
          from,
        });
      }
    } else if (learned.kind === 'rejected') {
      this.reporter.count('bindingsHeadersRejected');
      this.reporter.event({ type: 'bindings-rejected', atMs: Date.now(), code: learned.error.code, message: learned.error.message, from });
    }
  }

  /**
   * The remote kill switch: `webpp-control: off` on any response from the site. Binding
   * stops at once, the decision is remembered (so a re-installed worker stays off for
   * offRetryMs), and the worker unregisters itself.
   */
  private switchOff(from: string, io: RespondIO): void {
    if (!this.enabled) return;
    this.enabled = false;
    this.reporter.event({ type: 'control-off', atMs: Date.now(), from });
    this.reporter.flushEvents();
    io.waitUntil(
      Promise.allSettled([
        this.storage.set(CONTROL_KEY, { off: true, atMs: Date.now() }),
        this.unregister(),
        this.tellPagesOff(),
      ]),
    );
  }

  /**
   * Tells open pages (the page script stores a marker and stops registering). The page
   * whose navigation carried the switch-off is still loading, so tell again shortly after.
   */
  private async tellPagesOff(): Promise<void> {
    const message = { type: CONTROL_OFF_MESSAGE } as const;
    await this.notifyPages(message).catch(() => undefined);
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    await this.notifyPages(message).catch(() => undefined);
  }

  // ---------------------------------------------------------------- latency table

  private recordSample(server: ServerId, ttfbMs: number, kind: 'request' | 'refresh' | 'probe'): void {
    const table = this.latency.table;
    table.recordSample(server, ttfbMs);
    this.reporter.count('samples');
    void this.latency.changed();
    const view = serverView(table, server, Date.now());
    if (view) this.reporter.send({ type: 'sample', atMs: Date.now(), server, ttfbMs: round(ttfbMs), kind, view });
  }

  private markFailed(server: ServerId, outcome: AttemptOutcome): void {
    const table = this.latency.table;
    const wasFailed = table.isFailed(server);
    table.markFailed(server);
    void this.latency.changed();
    if (!wasFailed) this.reporter.event({ type: 'server-failed', atMs: Date.now(), server, outcome });
    const watchers = this.failureWatchers.get(server);
    if (watchers) for (const watcher of [...watchers]) watcher();
  }

  private watchServerFailure(server: ServerId, onFailed: () => void): () => void {
    let watchers = this.failureWatchers.get(server);
    if (!watchers) this.failureWatchers.set(server, (watchers = new Set()));
    watchers.add(onFailed);
    return () => {
      watchers.delete(onFailed);
      if (watchers.size === 0) this.failureWatchers.delete(server);
    };
  }

  // ---------------------------------------------------------------- helpers

  private isObservable(request: Request): boolean {
    return (
      isSameOrigin(request.url, this.selfOrigin) &&
      (request.mode === 'navigate' || OBSERVED_DESTINATIONS.has(request.destination))
    );
  }

  private rememberProbeUrl(server: ServerId, url: string): void {
    const urls = this.probeUrls.get(server);
    if (!urls) {
      this.probeUrls.set(server, [url]);
      return;
    }
    if (urls.includes(url)) return;
    urls.push(url);
    if (urls.length > PROBE_URLS_PER_SERVER) urls.shift();
  }

  /** "A randomly chosen resource" on the server (Section 4.1), among those it is known to hold. */
  private probeUrlFor(server: ServerId): string {
    const urls = this.probeUrls.get(server);
    if (!urls || urls.length === 0) return `${server}/`;
    return urls[Math.min(urls.length - 1, Math.floor(this.random() * urls.length))] as string;
  }

  private noteStale(physicalUrl: string, directoryVersion: number): void {
    if (this.staleMemo.size >= MAX_STALE_MEMO) this.staleMemo.clear();
    this.staleMemo.set(physicalUrl, directoryVersion);
    const urls = this.probeUrls.get(serverOf(physicalUrl));
    if (urls) {
      const index = urls.indexOf(physicalUrl);
      if (index !== -1) urls.splice(index, 1);
    }
  }

  private async load(): Promise<void> {
    try {
      const [control] = await Promise.all([
        this.storage.get(CONTROL_KEY),
        this.latency.load(),
        this.bindings.load(),
      ]);
      if (isRecentOff(control, this.options.offRetryMs)) {
        // Installed again after a switch-off: stay off, and tell the page script so it stops registering.
        this.enabled = false;
        this.reporter.event({ type: 'control-off', atMs: Date.now(), from: 'stored switch-off' });
        void this.unregister();
        void this.tellPagesOff();
      }
    } catch {
      // No IndexedDB (or a broken one): start empty; binding still works from memory.
    } finally {
      this.loaded = true;
    }
  }
}

function isRecentOff(value: unknown, offRetryMs: number): boolean {
  if (typeof value !== 'object' || value === null) return false;
  const { off, atMs } = value as { off?: unknown; atMs?: unknown };
  return off === true && typeof atMs === 'number' && Date.now() - atMs < offRetryMs;
}

function defaultPageNotifier(): (message: unknown) => Promise<unknown> {
  const clients = (globalThis as unknown as { clients?: Clients }).clients;
  if (!clients) return () => Promise.resolve();
  return async (message) => {
    for (const client of await clients.matchAll({ type: 'window', includeUncontrolled: true })) client.postMessage(message);
  };
}

function defaultPublisher(): ((events: WebppEvent[]) => void) | undefined {
  if (typeof BroadcastChannel === 'undefined') return undefined;
  let channel: BroadcastChannel | undefined;
  return (events) => {
    channel ??= new BroadcastChannel(EVENT_CHANNEL);
    channel.postMessage(events);
  };
}

function round(value: number): number {
  return Math.round(value * 100) / 100;
}
