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
import { BINDINGS_HEADER, serverOf } from '@webpp/core';
import type { BindingsDocument, RandomSource, ResolvedBinding, ServerId } from '@webpp/core';
import { classifyStatus, runAttempts } from './attempt-runner.js';
import type { AttemptSpec, RunnerIO } from './attempt-runner.js';
import { BindingsStore } from './bindings-store.js';
import { resolveWorkerOptions } from './config.js';
import type { ParsedWorkerOptions, WorkerOptions } from './config.js';
import { decisionRecord, failoverEvents, round } from './decision-record.js';
import { DigestStore } from './digest-store.js';
import { navigationErrorPage } from './error-page.js';
import { DEFAULT_VERIFY_BUFFER_BYTES } from './integrity.js';
import { IntegrityGuard } from './integrity-guard.js';
import { KillSwitch, isSwitchOff, pageNotifier } from './kill-switch.js';
import { ControlCheck } from './control-check.js';
import type { PageNotifier } from './kill-switch.js';
import { LatencyStore } from './latency-store.js';
import { Maintenance } from './maintenance.js';
import { OfflineCache, failedEverywhere } from './offline-cache.js';
import type { CacheLike } from './batch/logical-cache.js';
import { FLUSH_REQUEST, STATE_REQUEST } from './messages.js';
import type { AttemptOutcome, WebppEvent, WorkerStateSnapshot } from './messages.js';
import { buildPhysicalRequest, buildProbeRequest, isSameOrigin } from './physical-request.js';
import type { PhysicalRequestOptions } from './physical-request.js';
import { createPolicy, extendedRefreshPolicy } from './policy.js';
import type { ReplicaPolicy } from './policy.js';
import { resumableBody } from './resumable-body.js';
import type { ResumeAnswer, ResumeRequest } from './resumable-body.js';
import { servedResponse } from './served-response.js';
import { ProbeUrls, StaleBindings } from './server-memory.js';
import { StateReporter, broadcastPublisher, serverView, serverViews } from './state-reporter.js';
import { CONTROL_KEY, idbKeyValueStore } from './storage.js';
import type { KeyValueStore } from './storage.js';
import { TrustRule } from './trust.js';
import { StaticBindings } from './static-bindings.js';
import { TtfbSampler } from './ttfb-sampler.js';
import { ConnectionQueue } from './connection-queue.js';
import type { SampleKind } from './ttfb-sampler.js';
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
  notifyPages?: PageNotifier;
  /** Watch the worker's Resource Timing entries to leave HTTP-cache hits out of the samples. Default true. */
  observeResourceTiming?: boolean;
  /**
   * Paths on the page's origin that are never bound: webpp's own scripts. Default: the
   * page script "/webpp.js" and the worker's own path. A directory wildcard that covers
   * them must not make the page depend on a replica for the client itself.
   */
  ownScriptPaths?: string[];
  /** Bodies with a digest up to this size are verified before the page sees them (integrity.ts). Default 1 MiB. */
  verifyBufferBytes?: number;
  /** Where offline copies live (default: Cache Storage 'webpp-offline-v1'; offline-cache.ts). */
  openOfflineCache?: () => Promise<CacheLike>;
}

/** What resuming a broken body needs to know about its request. */
interface ResumeContext {
  request: Request;
  resolved: ResolvedBinding;
  /** The server whose body the page is reading. */
  server: ServerId;
  /** The plan of the request: the replicas to ask for the rest, in order. */
  specs: readonly AttemptSpec[];
  io: RespondIO;
}

/** Same-origin requests without bindings that are still worth reading bindings from. */
const OBSERVED_DESTINATIONS = new Set(['', 'document', 'iframe', 'style']);

export class ReplicaClient {
  readonly options: WorkerOptions;
  readonly configErrors: string[];
  readonly policy: ReplicaPolicy;
  readonly latency: LatencyStore;
  readonly bindings: BindingsStore;
  readonly reporter: StateReporter;
  readonly offline: OfflineCache;
  /** Resolves when the stored table and bindings are loaded (never rejects). */
  readonly ready: Promise<void>;
  private loaded = false;
  private readonly killSwitch: KillSwitch;
  private readonly selfOrigin: string;
  private readonly storage: KeyValueStore;
  private readonly random: RandomSource;
  private readonly sampler: TtfbSampler;
  /** The worker's requests per host, to tell untimed samples that waited in the browser's queue. */
  private readonly connections = new ConnectionQueue({ now: () => performance.now() });
  private readonly maintenance: Maintenance;
  private readonly plainFetch: (request: Request) => Promise<Response>;
  private readonly startedAtMs = Date.now();
  private readonly resolvedByRequest = new WeakMap<Request, ResolvedBinding>();
  private readonly failureWatchers = new Map<ServerId, Set<() => void>>();
  private readonly probeUrls = new ProbeUrls();
  private readonly staleBindings = new StaleBindings();
  private messageListenerAttached = false;
  private readonly ownScriptPrefixes: string[];
  private readonly trust: TrustRule;
  readonly digests: DigestStore;
  private readonly integrity: IntegrityGuard;
  private readonly controlCheck: ControlCheck;
  private readonly staticBindings: StaticBindings;

  constructor(init: ReplicaClientOptions = {}) {
    const parsed = init.parsed ?? resolveWorkerOptions(init.settings);
    this.options = parsed.options;
    this.configErrors = [...parsed.errors];
    this.random = init.random ?? Math.random;
    const named = createPolicy(this.options.policy, { config: this.options.selection, random: this.random });
    if (!init.policy && !named) this.configErrors.push(`unknown policy "${this.options.policy}"; using "refresh"`);
    this.policy = init.policy ?? named ?? extendedRefreshPolicy();
    const location = (globalThis as { location?: { origin: string; pathname: string } }).location;
    this.selfOrigin = init.selfOrigin ?? location?.origin ?? '';
    const ownPaths = init.ownScriptPaths ?? ['/webpp.js', ...(location?.pathname ? [location.pathname] : [])];
    this.ownScriptPrefixes = ownPaths.map((path) => `${this.selfOrigin}${path}`);
    this.storage = init.storage ?? idbKeyValueStore();
    this.plainFetch = init.fetch ?? ((request) => fetch(request));
    this.killSwitch = new KillSwitch({
      storage: this.storage,
      offRetryMs: this.options.offRetryMs,
      unregister:
        init.unregister ??
        (() => (globalThis as unknown as { registration?: ServiceWorkerRegistration }).registration?.unregister() ?? Promise.resolve()),
      notifyPages: init.notifyPages ?? pageNotifier(),
    });
    this.reporter = new StateReporter({
      historySize: this.options.historySize,
      publish: init.publish ?? broadcastPublisher(),
    });
    this.latency = new LatencyStore({
      config: this.options.selection,
      storage: this.storage,
      flushDelayMs: this.options.flushDelayMs,
      onFlushed: () => this.reporter.count('tableFlushes'),
    });
    this.bindings = new BindingsStore({ storage: this.storage, flushDelayMs: this.options.flushDelayMs });
    this.trust = new TrustRule(this.selfOrigin);
    this.staticBindings = new StaticBindings({ selfOrigin: this.selfOrigin, storage: this.storage, fetch: this.plainFetch });
    this.digests = new DigestStore({ storage: this.storage, flushDelayMs: this.options.flushDelayMs });
    this.integrity = new IntegrityGuard({
      digests: this.digests,
      selfOrigin: this.selfOrigin,
      maxBufferBytes: init.verifyBufferBytes ?? DEFAULT_VERIFY_BUFFER_BYTES,
      onMismatch: ({ server, logicalUrl, expected, actual, streamed }) => {
        this.reporter.count('integrityFailures');
        this.reporter.event({ type: 'integrity-failure', atMs: Date.now(), server, logicalUrl, expected, actual, streamed });
        this.markFailed(server, 'network-error');
      },
      onUnreadable: (server) => this.markFailed(server, 'network-error'),
      onVerified: () => this.reporter.count('bodiesVerified'),
    });
    this.controlCheck = new ControlCheck({
      selfOrigin: this.selfOrigin,
      intervalMs: this.options.controlCheckMs,
      now: () => performance.now(),
      head: (url, signal) => this.plainFetch(buildProbeRequest(url, this.selfOrigin, signal)),
      timeoutMs: () => this.options.selection.timeoutCeilingMs,
      answered: (response, url) => {
        const started: Promise<unknown>[] = [];
        this.learnFrom(response, url, { fetch: this.plainFetch, waitUntil: (promise) => void started.push(promise) });
        return Promise.allSettled(started);
      },
    });
    this.offline = new OfflineCache({
      storage: this.storage,
      selfOrigin: this.selfOrigin,
      maxBytes: this.options.offlineMaxBytes,
      maxEntries: this.options.offlineMaxEntries,
      maxEntryBytes: this.options.offlineMaxEntryBytes,
      maxAgeMs: this.options.offlineMaxAgeMs,
      flushDelayMs: this.options.flushDelayMs,
      ...(init.openOfflineCache ? { openCache: init.openOfflineCache } : {}),
      onServed: (logicalUrl, savedAtMs) => {
        this.reporter.count('offlineCopies');
        this.reporter.event({ type: 'offline-copy', atMs: Date.now(), logicalUrl, savedAtMs });
      },
    });
    this.sampler = new TtfbSampler({
      now: () => performance.now(),
      maxPending: 1_024,
      sink: {
        record: (server, ttfbMs, kind) => this.recordSample(server, ttfbMs, kind),
        skipped: () => this.reporter.count('cacheHitsSkipped'),
        queued: () => this.reporter.count('queuedSamplesSkipped'),
      },
      queue: this.connections,
    });
    if (init.observeResourceTiming !== false) this.sampler.observeResourceTiming();
    this.maintenance = new Maintenance({
      probeUrl: (server) => this.probeUrls.pick(server, this.random),
      buildRequest: (url, signal) => buildProbeRequest(url, this.selfOrigin, signal),
      fetch: this.connections.track(this.plainFetch),
      now: () => performance.now(),
      timeoutMs: (server) => this.latency.table.timeoutMs(server),
      probeSent: (server) => {
        this.latency.table.recordProbeSent(server);
        this.reporter.count('probes');
      },
      answered: (server, kind, url, ttfbMs, status, sentAtMs) => {
        const wasFailed = this.latency.table.isFailed(server);
        // A HEAD can wait behind a burst to the same server too: its sample comes from Resource Timing.
        this.sampler.add({ url, server, kind, sentAtMs, headersAtMs: sentAtMs + ttfbMs, mayBeCached: false });
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
    return !this.killSwitch.isOff;
  }

  /**
   * Synchronous and cheap: decides whether the worker answers this request at all. Called
   * for every request the page makes, so it does no more than a method check, a prefix
   * test and one bindings lookup.
   */
  route(request: Request): Route {
    if (this.killSwitch.isOff) return 'pass';
    const { method } = request;
    if (method !== 'GET' && method !== 'HEAD') return 'pass';
    const { url } = request;
    if (!url.startsWith('http:') && !url.startsWith('https:')) return 'pass';
    if (this.isOwnScript(url)) return 'pass';
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
      const enabled = this.isEnabled;
      const resolved = enabled ? (this.resolvedByRequest.get(request) ?? this.bindings.resolve(request.url)) : undefined;
      if (resolved && (request.method === 'GET' || request.method === 'HEAD')) return await this.bind(request, resolved, io);
      if (enabled && this.isObservable(request)) return await this.observe(request, io);
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
      enabled: this.isEnabled,
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
      offline: { enabled: this.offline.enabled, ...this.offline.snapshot() },
    };
  }

  /** Writes pending table and bindings changes to IndexedDB now. */
  async flush(): Promise<void> {
    this.sampler.expire();
    await Promise.all([this.latency.flushNow(), this.bindings.flushNow(), this.digests.flushNow(), this.offline.flush()]);
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
      this.probeUrls.remember(server, url);
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
      // Figure 4's timeout marks the server failed and asks the next one; the request itself
      // stays as a hedge until the ceiling, so a live but queued or slow replica still counts.
      const spec: AttemptSpec = { ...attempt, physicalUrl, deadlineMs: Math.max(attempt.timeoutMs, this.options.selection.timeoutCeilingMs) };
      // A replica that answered 404/410 for this directory version goes last (it may be back later).
      (this.staleBindings.isStale(physicalUrl, resolved.directoryVersion) ? demoted : specs).push(spec);
    }
    specs.push(...demoted);
    const bindMs = performance.now() - arrivedMs;

    const runnerIO = this.runnerIO(request, resolved, io);
    const result = await this.integrity.run(request, resolved.logical, specs, (plan) => runAttempts(plan, runnerIO, request.signal));
    io.waitUntil(this.afterRequest(candidates));

    const navigation = request.mode === 'navigate';
    // Stale-if-error: a saved copy only when no replica gave a live answer (offline-cache.ts).
    const offlineCopy = failedEverywhere(result) ? await this.offline.rescue(request, resolved.logical) : undefined;
    let response: Response;
    if (offlineCopy) {
      this.reporter.count('failed');
      if (result.kind === 'failed') result.fallback?.response.body?.cancel().catch(() => undefined);
      response = offlineCopy;
    } else if (result.kind === 'served') {
      this.reporter.count('served');
      const served = servedResponse(request, result.winner.physicalUrl, result.response);
      if (navigation && result.winner.server !== this.selfOrigin) io.waitUntil(this.controlCheck.afterReplicaNavigation(resolved.logical));
      // Verified bytes only (integrity.ts) are kept for offline use (offline-cache.ts).
      const guarded = this.integrity.guard(request, this.resumable(served, { request, resolved, server: result.winner.server, specs, io }));
      response = this.offline.keep(request, resolved.logical, guarded, (promise) => io.waitUntil(promise));
    } else if (result.kind === 'failed' && result.fallback) {
      // Every replica failed, but one answered (e.g. 404 everywhere): that answer is the truth.
      this.reporter.count('failed');
      const answer = servedResponse(request, result.fallback.attempt.physicalUrl, result.fallback.response);
      response = this.offline.keep(request, resolved.logical, answer, (promise) => io.waitUntil(promise)); // a 404/410 deletes the copy
    } else {
      if (result.kind === 'failed') this.reporter.count('failed');
      response = navigation && result.kind === 'failed' ? navigationErrorPage(resolved.logical, result.attempts) : Response.error();
    }

    const decision = decisionRecord({
      id: this.reporter.decisionId(),
      atMs,
      request,
      logicalUrl: resolved.logical,
      policy: this.policy.name,
      result,
      bindMs,
      totalMs: performance.now() - arrivedMs,
    });
    for (const event of failoverEvents(decision, Date.now())) {
      this.reporter.count('failovers');
      if (event.type === 'failover' && event.outcome === 'stale') this.reporter.count('staleBindings');
      this.reporter.event(event);
    }
    this.reporter.decision(decision);
    return response;
  }

  /**
   * How the attempts of one logical request reach the replicas (the page's request rebuilt
   * per replica, or a resume of its body), and what every answer teaches.
   */
  private runnerIO(request: Request, resolved: ResolvedBinding, io: RespondIO, resume?: PhysicalRequestOptions['resume']): RunnerIO {
    const mayBeCached = !resume && request.method === 'GET' && request.cache !== 'no-store' && request.cache !== 'reload';
    return {
      fetch: this.connections.track(io.fetch.bind(io)),
      now: () => performance.now(),
      buildRequest: (spec, signal) =>
        buildPhysicalRequest(request, spec.physicalUrl, { selfOrigin: this.selfOrigin, signal, ...(resume ? { resume } : {}) }),
      onResponse: (spec, response, ttfbMs, sentAtMs) => {
        const outcome = classifyStatus(response.status);
        if (outcome !== 'server-error') {
          this.sampler.add({
            url: spec.physicalUrl,
            server: spec.server,
            kind: 'request',
            sentAtMs,
            headersAtMs: sentAtMs + ttfbMs,
            mayBeCached: mayBeCached && response.status !== 304,
          });
          this.learnFrom(response, resolved.logical, io, this.trust.isOwn(spec.server, response.url) ? undefined : spec.server);
        }
        if (outcome === 'stale') this.noteStale(spec.physicalUrl, resolved.directoryVersion);
      },
      onServerFailure: (spec, outcome) => this.markFailed(spec.server, outcome),
      watchServerFailure: (server, onFailed) => this.watchServerFailure(server, onFailed),
    };
  }

  /**
   * The served response with a body that survives its replica dying mid-stream: the rest
   * comes from the next replica of the plan by a Range request (resumable-body.ts).
   */
  private resumable(response: Response, context: ResumeContext): Response {
    const { request, resolved, io } = context;
    if (request.method !== 'GET' || !response.body || (response.status !== 200 && response.status !== 206)) return response;
    if (response.type === 'opaque' || response.type === 'opaqueredirect') return response;
    const lengthBytes = Number(response.headers.get('content-length') ?? Number.NaN);
    if (Number.isFinite(lengthBytes) && lengthBytes < this.options.resumeMinBytes) return response;
    let settle!: () => void;
    const settled = new Promise<void>((resolve) => (settle = resolve));
    const body = resumableBody({
      response,
      server: context.server,
      maxResumes: context.specs.length,
      // A body frozen by a partition (no error, no bytes) is resumed like a broken one.
      idleTimeoutMs: this.options.selection.timeoutCeilingMs,
      fetchRest: (rest) => this.fetchRest(rest, context),
      onBroken: (server) => this.markFailed(server, 'network-error'),
      onResumed: (report) => {
        this.reporter.count('bodyResumes');
        this.reporter.event({ type: 'body-resumed', atMs: Date.now(), logicalUrl: resolved.logical, ...report });
      },
      onSettled: () => settle(),
    });
    if (body === response.body) return response;
    // The worker's code runs until the body ends: keep the worker alive that long.
    io.waitUntil(settled);
    return new Response(body, { status: response.status, statusText: response.statusText, headers: response.headers });
  }

  /** The rest of a broken body from the next replica of the plan that answers. */
  private async fetchRest(rest: ResumeRequest, context: ResumeContext): Promise<ResumeAnswer | undefined> {
    const specs = context.specs.filter((spec) => !rest.exclude.has(spec.server));
    if (specs.length === 0) return undefined;
    const runnerIO = this.runnerIO(context.request, context.resolved, context.io, { range: rest.range, ifRange: rest.ifRange });
    const result = await runAttempts(specs, runnerIO, context.request.signal);
    if (result.kind === 'served') return { server: result.winner.server, response: result.response };
    if (result.kind === 'failed') result.fallback?.response.body?.cancel().catch(() => undefined);
    return undefined;
  }

  private async observe(request: Request, io: RespondIO): Promise<Response> {
    this.reporter.count('observed');
    let response: Response;
    try {
      response = await io.fetch(request);
    } catch {
      return (await this.offline.rescue(request, request.url)) ?? Response.error();
    }
    const offlineCopy = response.status >= 500 ? await this.offline.rescue(request, request.url) : undefined;
    if (offlineCopy) return (void response.body?.cancel().catch(() => undefined), offlineCopy);
    if (response.type === 'basic' || response.type === 'default') {
      this.learnFrom(response, request.url, io);
      // A static host sends no header: its bindings are in the static bindings file (static-bindings.ts).
      if (response.ok && !response.headers.has(BINDINGS_HEADER)) await this.learnStaticBindings(io);
    }
    return this.offline.keep(request, request.url, response, (promise) => io.waitUntil(promise));
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

  /**
   * Reads the bindings and control headers of a response from the site or one of its
   * replicas. `replica`: the server, when it is not the site's own origin; what it says goes
   * through the trust rule (trust.ts).
   */
  private learnFrom(response: Response, from: string, io: RespondIO, replica?: ServerId): void {
    const { headers } = response;
    if (replica === undefined) this.controlCheck.heard();
    if (isSwitchOff(headers)) {
      if (replica === undefined) return this.switchOff(from, io);
      this.reporter.count('untrustedHeaders');
      this.reporter.event({ type: 'untrusted-header', atMs: Date.now(), header: 'webpp-control', server: replica, from });
    }
    const learned = this.bindings.learn(headers, replica === undefined ? undefined : (document) => this.screen(document, replica, from));
    if (learned.kind === 'applied') {
      this.reporter.count('bindingsHeadersAccepted');
      if (replica === undefined && learned.document) {
        this.trust.learnServers(learned.document.bindings);
        this.trust.learnOwnVersion(learned.document.directoryVersion);
        if (this.digests.record(learned.document.digests ?? []) > 0) io.waitUntil(this.digests.changed());
      }
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
   * The own origin's static bindings file, line by line, as if each line came in a header of
   * the own origin. The page waits for it only while the worker holds no bindings at all (the
   * file covers the whole site); otherwise it is revalidated in the background.
   */
  private async learnStaticBindings(io: RespondIO): Promise<void> {
    const from = this.staticBindings.url;
    const read = this.staticBindings.whenHeaderMissing((value) => this.learnFrom(new Response(null, { headers: { [BINDINGS_HEADER]: value } }), from, io));
    if (this.bindings.size === 0) await read;
    else io.waitUntil(read);
  }

  /** A replica's bindings, as the trust rule allows them; dropped rows are counted and reported. */
  private screen(document: BindingsDocument, replica: ServerId, from: string): BindingsDocument {
    const screened = this.trust.screen(document);
    if (screened.dropped.length > 0) {
      this.reporter.count('untrustedBindings', screened.dropped.length);
      this.reporter.event({ type: 'untrusted-bindings', atMs: Date.now(), server: replica, from, dropped: screened.dropped.slice(0, 8), droppedCount: screened.dropped.length });
    }
    return screened.document;
  }

  /** The remote kill switch (kill-switch.ts): binding stops before this response is even returned. */
  private switchOff(from: string, io: RespondIO): void {
    if (this.killSwitch.isOff) return;
    io.waitUntil(this.killSwitch.switchOff());
    this.reporter.event({ type: 'control-off', atMs: Date.now(), from });
    this.reporter.flushEvents();
  }

  // ---------------------------------------------------------------- latency table

  private recordSample(server: ServerId, ttfbMs: number, kind: SampleKind): void {
    const table = this.latency.table;
    table.recordSample(server, ttfbMs);
    this.policy.observeSample?.(server, ttfbMs);
    this.reporter.count('samples');
    void this.latency.changed();
    const view = serverView(table, server, Date.now());
    if (view) this.reporter.send({ type: 'sample', atMs: Date.now(), server, ttfbMs: round(ttfbMs), kind, view });
  }

  private markFailed(server: ServerId, outcome: AttemptOutcome): void {
    const table = this.latency.table;
    const wasFailed = table.isFailed(server);
    table.markFailed(server);
    this.sampler.noteFailure(server);
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

  /** webpp's own scripts, with or without a query. */
  private isOwnScript(url: string): boolean {
    for (const prefix of this.ownScriptPrefixes) {
      if (url.startsWith(prefix) && (url.length === prefix.length || url[prefix.length] === '?')) return true;
    }
    return false;
  }

  private isObservable(request: Request): boolean {
    return (
      isSameOrigin(request.url, this.selfOrigin) &&
      (request.mode === 'navigate' || OBSERVED_DESTINATIONS.has(request.destination))
    );
  }

  private noteStale(physicalUrl: string, directoryVersion: number): void {
    this.staleBindings.note(physicalUrl, directoryVersion);
    this.probeUrls.forget(serverOf(physicalUrl), physicalUrl);
  }

  private async load(): Promise<void> {
    try {
      const [control] = await Promise.all([
        this.storage.get(CONTROL_KEY),
        this.latency.load(),
        this.bindings.load(),
        this.digests.load(),
      ]);
      this.trust.learnServers(this.bindings.held());
      this.trust.learnOwnVersion(this.bindings.directoryVersion);
      // Installed again soon after a switch-off: stay off (and tell the pages again).
      if (await this.killSwitch.restore(control)) {
        this.reporter.event({ type: 'control-off', atMs: Date.now(), from: 'stored switch-off' });
      }
    } catch {
      // No IndexedDB (or a broken one): start empty; binding still works from memory.
    } finally {
      this.loaded = true;
    }
  }
}

