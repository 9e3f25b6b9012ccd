/**
 * The smart client of Web++ (paper Section 3) as one object that both integration paths
 * share: the bundled worker (webpp-sw.ts) and the Workbox strategy (workbox.ts). It wires
 * the stages a request passes, top to bottom:
 *
 *   route (here: answer at all?) → bind.ts: plan → attempt → serve → learn → background
 *
 * The decisions (plan, timeouts, hedges, failover, refreshes and probes) are @webpp/core's
 * client engine with the policy named in the options (packages/core/src/policies); this
 * worker drives it with fetch and real timers (fetch-io.ts). Telemetry hooks in through the
 * engine's lifecycle callbacks (telemetry.ts). Anything unexpected in its own logic falls
 * back to a plain fetch (fail open).
 */
import { ClientEngine, combineHooks, createPolicy } from '@webpp/core';
import type { ClientPolicy, RandomSource, ResolvedBinding, ServerId } from '@webpp/core';
import { BindStage } from './bind.js';
import type { RespondIO } from './bind.js';
import { BindingsStore } from './bindings-store.js';
import { resolveWorkerOptions } from './config.js';
import type { ParsedWorkerOptions, WorkerOptions } from './config.js';
import { ConnectionQueue } from './connection-queue.js';
import { ControlCheck } from './control-check.js';
import { DigestStore } from './digest-store.js';
import { fetchIO } from './fetch-io.js';
import { HeaderLearning } from './header-learning.js';
import { DEFAULT_VERIFY_BUFFER_BYTES } from './integrity.js';
import { IntegrityGuard } from './integrity-guard.js';
import { KillSwitch, pageNotifier } from './kill-switch.js';
import type { PageNotifier } from './kill-switch.js';
import { backgroundSender, backgroundTarget } from './maintenance.js';
import { FLUSH_REQUEST, STATE_REQUEST } from './messages.js';
import type { WebppEvent, WorkerStateSnapshot } from './messages.js';
import { observeRequest } from './observe.js';
import { OfflineCache } from './offline-cache.js';
import type { CacheLike } from './batch/logical-cache.js';
import { buildProbeRequest, isSameOrigin } from './physical-request.js';
import { PolicyStore } from './policy-store.js';
import { policyServerViews, policyTableJSON } from './policy-views.js';
import { ResumeStage } from './resume.js';
import { SampleStage } from './samples.js';
import { ProbeUrls, StaleBindings } from './server-memory.js';
import { StateReporter, broadcastPublisher } from './state-reporter.js';
import { StaticBindings } from './static-bindings.js';
import { CONTROL_KEY, idbKeyValueStore } from './storage.js';
import type { KeyValueStore } from './storage.js';
import { reportDecision, telemetryHooks } from './telemetry.js';
import { TrustRule } from './trust.js';
import { SW_VERSION } from './version.js';

export type { RespondIO } from './bind.js';

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

export interface ReplicaClientOptions {
  /** Parsed options (from the worker's URL); or `settings` to resolve them here. */
  parsed?: ParsedWorkerOptions;
  settings?: Parameters<typeof resolveWorkerOptions>[0];
  /** The page origin the worker serves; default: the worker's own origin. */
  selfOrigin?: string;
  storage?: KeyValueStore;
  /** Overrides the policy named in the options (any @webpp/core ClientPolicy). */
  policy?: ClientPolicy;
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

/** Same-origin requests without bindings that are still worth reading bindings from. */
const OBSERVED_DESTINATIONS = new Set(['', 'document', 'iframe', 'style']);

/** The policy named in the options, from core's registry; the paper's extended Refresh when the name is unknown. */
function namedPolicy(options: WorkerOptions, random: RandomSource, errors: string[]): ClientPolicy {
  const deps = { random, now: Date.now };
  const settings = { preset: options.preset, selection: options.selection };
  try {
    const named = createPolicy(options.policy, deps, settings);
    if (named) return named;
    errors.push(`unknown policy "${options.policy}"; using "refresh"`);
  } catch (error) {
    errors.push(`policy "${options.policy}": ${error instanceof Error ? error.message : String(error)}; using "refresh"`);
  }
  return createPolicy('refresh', deps, settings)!;
}

export class ReplicaClient {
  readonly options: WorkerOptions;
  readonly configErrors: string[];
  readonly policy: ClientPolicy;
  readonly engine: ClientEngine<Response, import('./fetch-io.js').ExchangeSender>;
  readonly store: PolicyStore;
  readonly bindings: BindingsStore;
  readonly reporter: StateReporter;
  readonly offline: OfflineCache;
  readonly digests: DigestStore;
  /** Resolves when the stored state and bindings are loaded (never rejects). */
  readonly ready: Promise<void>;
  private loaded = false;
  private readonly killSwitch: KillSwitch;
  private readonly selfOrigin: string;
  private readonly storage: KeyValueStore;
  private readonly samples: SampleStage;
  private readonly bindStage: BindStage;
  private readonly headers: HeaderLearning;
  private readonly trust: TrustRule;
  private readonly startedAtMs = Date.now();
  private readonly resolvedByRequest = new WeakMap<Request, ResolvedBinding>();
  private readonly ownScriptPrefixes: string[];
  private messageListenerAttached = false;

  constructor(init: ReplicaClientOptions = {}) {
    const parsed = init.parsed ?? resolveWorkerOptions(init.settings);
    this.options = parsed.options;
    this.configErrors = [...parsed.errors];
    const random = init.random ?? Math.random;
    this.policy = init.policy ?? namedPolicy(this.options, random, this.configErrors);
    const location = (globalThis as { location?: { origin: string; pathname: string } }).location;
    this.selfOrigin = init.selfOrigin ?? location?.origin ?? '';
    const ownPaths = init.ownScriptPaths ?? ['/webpp.js', ...(location?.pathname ? [location.pathname] : [])];
    this.ownScriptPrefixes = ownPaths.map((path) => `${this.selfOrigin}${path}`);
    this.storage = init.storage ?? idbKeyValueStore();
    const plainFetch = init.fetch ?? ((request: Request) => fetch(request));
    const { options, selfOrigin, storage } = this;
    this.reporter = new StateReporter({ historySize: options.historySize, publish: init.publish ?? broadcastPublisher() });
    const reporter = this.reporter;
    this.killSwitch = new KillSwitch({
      storage,
      offRetryMs: options.offRetryMs,
      unregister: init.unregister ?? (() => (globalThis as unknown as { registration?: ServiceWorkerRegistration }).registration?.unregister() ?? Promise.resolve()),
      notifyPages: init.notifyPages ?? pageNotifier(),
    });
    this.store = new PolicyStore({ policy: this.policy, storage, flushDelayMs: options.flushDelayMs, onFlushed: () => reporter.count('tableFlushes') });
    this.bindings = new BindingsStore({ storage, flushDelayMs: options.flushDelayMs });
    this.trust = new TrustRule(selfOrigin);
    this.digests = new DigestStore({ storage, flushDelayMs: options.flushDelayMs });

    // The learn stage: measurements (Resource Timing) and what each sample does to the policy.
    const connections = new ConnectionQueue({ now: () => performance.now() });
    const probeUrls = new ProbeUrls();
    this.samples = new SampleStage({
      queue: connections,
      observe: (sample) => this.engine.observe(sample),
      onCacheHit: () => reporter.count('cacheHitsSkipped'),
      onQueued: () => reporter.count('queuedSamplesSkipped'),
      observeResourceTiming: init.observeResourceTiming !== false,
    });
    const background = backgroundSender({ selfOrigin, probeUrls, random, fetch: connections.track(plainFetch), samples: this.samples });
    this.engine = new ClientEngine({
      policy: this.policy,
      io: fetchIO(background),
      backgroundTarget: backgroundTarget(probeUrls, random),
      backgroundTimeoutMs: options.selection.timeoutCeilingMs,
      hooks: combineHooks(
        { sampleWillBeObserved: (sample) => this.samples.noteEngineSample(sample), sampleObserved: () => void this.store.changed() },
        telemetryHooks(reporter, this.policy),
      ),
    });
    const observe = this.engine.observe.bind(this.engine);
    const failed = (server: ServerId): void => observe({ server, purpose: 'request', outcome: 'network-error', nowMs: Date.now() });

    let controlCheck: ControlCheck | undefined;
    this.headers = new HeaderLearning({
      bindings: this.bindings,
      digests: this.digests,
      trust: this.trust,
      killSwitch: this.killSwitch,
      staticBindings: new StaticBindings({ selfOrigin, storage, fetch: plainFetch }),
      reporter,
      heardFromOwnOrigin: () => controlCheck?.heard(),
    });
    controlCheck = new ControlCheck({
      selfOrigin,
      intervalMs: options.controlCheckMs,
      now: () => performance.now(),
      head: (url, signal) => plainFetch(buildProbeRequest(url, selfOrigin, signal)),
      timeoutMs: () => options.selection.timeoutCeilingMs,
      answered: (response, url) => {
        const started: Promise<unknown>[] = [];
        this.headers.learnFrom(response, url, (promise) => void started.push(promise));
        return Promise.allSettled(started);
      },
    });
    this.offline = new OfflineCache({
      storage,
      selfOrigin,
      maxBytes: options.offlineMaxBytes,
      maxEntries: options.offlineMaxEntries,
      maxEntryBytes: options.offlineMaxEntryBytes,
      maxAgeMs: options.offlineMaxAgeMs,
      flushDelayMs: options.flushDelayMs,
      ...(init.openOfflineCache ? { openCache: init.openOfflineCache } : {}),
      onServed: (logicalUrl, savedAtMs) => {
        reporter.count('offlineCopies');
        reporter.event({ type: 'offline-copy', atMs: Date.now(), logicalUrl, savedAtMs });
      },
    });
    this.bindStage = new BindStage({
      engine: this.engine,
      selfOrigin,
      reporter,
      headers: this.headers,
      samples: this.samples,
      integrity: new IntegrityGuard({
        digests: this.digests,
        selfOrigin,
        maxBufferBytes: init.verifyBufferBytes ?? DEFAULT_VERIFY_BUFFER_BYTES,
        onMismatch: ({ server, logicalUrl, expected, actual, streamed }) => {
          reporter.count('integrityFailures');
          reporter.event({ type: 'integrity-failure', atMs: Date.now(), server, logicalUrl, expected, actual, streamed });
          failed(server);
        },
        onUnreadable: failed,
        onVerified: () => reporter.count('bodiesVerified'),
      }),
      resume: new ResumeStage({ resumeMinBytes: options.resumeMinBytes, reporter, observe }),
      offline: this.offline,
      controlCheck,
      trust: this.trust,
      probeUrls,
      staleBindings: new StaleBindings(),
      track: (fetcher) => connections.track(fetcher),
      afterRequest: (candidates) => this.afterRequest(candidates),
      decisionMade: reportDecision(reporter),
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
    const { method, url } = request;
    if (method !== 'GET' && method !== 'HEAD') return 'pass';
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
      if (resolved && (request.method === 'GET' || request.method === 'HEAD')) return await this.bindStage.handle(request, resolved, io);
      if (enabled && this.isObservable(request)) return await observeRequest(request, io, { reporter: this.reporter, headers: this.headers, offline: this.offline });
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
      servers: policyServerViews(this.policy, nowMs),
      table: policyTableJSON(this.policy),
      counters: { ...this.reporter.counters },
      decisions: this.reporter.recentDecisions(),
      events: this.reporter.recentEvents(),
      offline: { enabled: this.offline.enabled, ...this.offline.snapshot() },
    };
  }

  /** Writes pending policy state and bindings changes to IndexedDB now. */
  async flush(): Promise<void> {
    this.samples.expire();
    await Promise.all([this.store.flushNow(), this.bindings.flushNow(), this.digests.flushNow(), this.offline.flush()]);
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

  /** After every bound request: the policy's background requests (Figure 4), then a batched state write. */
  private async afterRequest(candidates: readonly ServerId[]): Promise<void> {
    try {
      this.samples.expire();
      await new Promise<void>((resolve) => this.engine.maintain(candidates, resolve));
      await this.store.changed();
    } catch {
      // Background work never affects a page.
    }
  }

  /** webpp's own scripts, with or without a query. */
  private isOwnScript(url: string): boolean {
    for (const prefix of this.ownScriptPrefixes) {
      if (url.startsWith(prefix) && (url.length === prefix.length || url[prefix.length] === '?')) return true;
    }
    return false;
  }

  private isObservable(request: Request): boolean {
    return isSameOrigin(request.url, this.selfOrigin) && (request.mode === 'navigate' || OBSERVED_DESTINATIONS.has(request.destination));
  }

  private async load(): Promise<void> {
    try {
      const [control] = await Promise.all([this.storage.get(CONTROL_KEY), this.store.load(), this.bindings.load(), this.digests.load()]);
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
