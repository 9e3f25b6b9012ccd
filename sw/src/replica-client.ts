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
import { serverOf } from '@webpp/core';
import type { ClientPolicy, ServerId } from '@webpp/core';
import { BindStage } from './bind.js';
import type { RespondIO } from './bind.js';
import { BindingsStore } from './bindings-store.js';
import type { ReplicaClientOptions } from './client-options.js';
import { resolveWorkerOptions } from './config.js';
import { ConnectionQueue } from './connection-queue.js';
import { EngineHooks } from './engine-hooks.js';
import { relocateEmbeds } from './embed-relocation.js';
import type { RelocateQuery } from './embed-relocation.js';
import { NO_INTEGRITY } from './integrity-stage.js';
import type { IntegrityStage } from './integrity-stage.js';
import { KillSwitch, pageNotifier } from './kill-switch.js';
import { observeRequest } from './observe.js';
import type { WorkerStateSnapshot } from './messages.js';
import type { WorkerOptions } from './config.js';
import type { SampleStage } from './samples.js';
import { reportDecision } from './telemetry.js';
import { namedPolicy, workerEngine } from './worker-engine.js';
import type { WorkerEngine } from './worker-engine.js';
import { listenToPages } from './page-messages.js';
import { Router } from './route.js';
import type { Route } from './route.js';
import { PolicyStore } from './policy-store.js';
import { policyServerViews, policyTableJSON } from './policy-views.js';
import { ResumeStage } from './resume.js';
import { headerStages } from './stage-wiring.js';
import type { HeaderLearning } from './header-learning.js';
import { NO_OFFLINE_COPIES } from './offline-copies.js';
import type { OfflineCopies } from './offline-copies.js';
import { ProbeUrls, StaleBindings } from './server-memory.js';
import { PersonalUrls } from './personal-answers.js';
import { isSameOrigin } from './physical-request.js';
import { UnusableReplicas } from './unusable-replicas.js';
import { StateReporter, broadcastPublisher } from './state-reporter.js';
import { BINDINGS_KEY, CONTROL_KEY, DIGESTS_KEY, LATENCY_TABLE_KEY, idbKeyValueStore, readAll } from './storage.js';
import type { KeyValueStore } from './storage.js';
import { TrustRule } from './trust.js';
import { PushedLoad, policyPushSink } from './pushed-load.js';
import { NO_CLIENT_AGGREGATE } from './client-aggregate-stage.js';
import type { ClientAggregateStage } from './client-aggregate-stage.js';
import { SW_VERSION } from './version.js';

export type { RespondIO } from './bind.js';
export type { ReplicaClientOptions } from './client-options.js';

export type { Route } from './route.js';

/** A stage that may answer a fetch event before route and respond (batch transmission). */
export interface FrontStage {
  /** Answers the event (respondWith) and returns true when it handles it. Never throws. */
  handleFetch(event: FetchEvent): boolean;
}

export class ReplicaClient {
  readonly options: WorkerOptions;
  readonly configErrors: string[];
  readonly policy: ClientPolicy;
  readonly engine: WorkerEngine;
  readonly store: PolicyStore;
  readonly bindings: BindingsStore;
  readonly reporter: StateReporter;
  readonly offline: OfflineCopies;
  /** Content integrity (NO_INTEGRITY unless the integrity add-on is on). */
  readonly integrity: IntegrityStage;
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
  private readonly pushed: PushedLoad;
  private readonly aggregate: ClientAggregateStage;
  private readonly startedAtMs = Date.now();
  private readonly plainFetch: (request: Request) => Promise<Response>;
  private readonly router: Router;
  private messageListenerAttached = false;
  private batching: FrontStage | undefined;

  constructor(init: ReplicaClientOptions = {}) {
    const parsed = init.parsed ?? resolveWorkerOptions(init.settings, init.internal);
    this.options = parsed.options;
    this.configErrors = [...parsed.errors];
    const random = init.random ?? Math.random;
    this.policy = init.policy ?? namedPolicy(this.options, random, this.configErrors, init.policies);
    const location = (globalThis as { location?: { origin: string; pathname: string } }).location;
    this.selfOrigin = init.selfOrigin ?? location?.origin ?? '';
    const ownPaths = init.ownScriptPaths ?? ['/webpp.js', ...(location?.pathname ? [location.pathname] : [])];
    this.storage = init.storage ?? idbKeyValueStore();
    const plainFetch = init.fetch ?? ((request: Request) => fetch(request));
    this.plainFetch = plainFetch;
    const { options, selfOrigin, storage } = this;
    // Live events go out only while a page listens (webpp.on, the dashboard), unless the caller publishes itself.
    const publish = init.publish ?? broadcastPublisher((leaseMs) => this.reporter.subscribe(leaseMs));
    this.reporter = new StateReporter({ historySize: options.historySize, onlyWhenSubscribed: init.publish === undefined, ...(publish ? { publish } : {}) });
    const reporter = this.reporter;
    this.killSwitch = new KillSwitch({
      storage,
      offRetryMs: options.offRetryMs,
      unregister: init.unregister ?? (() => (globalThis as unknown as { registration?: ServiceWorkerRegistration }).registration?.unregister() ?? Promise.resolve()),
      notifyPages: init.notifyPages ?? pageNotifier(),
    });
    this.store = new PolicyStore({ policy: this.policy, storage, flushDelayMs: options.flushDelayMs, onFlushed: () => reporter.count('tableFlushes') });
    this.bindings = new BindingsStore({ storage, flushDelayMs: options.flushDelayMs });
    const personal = new PersonalUrls();
    this.router = new Router({ selfOrigin, ownScriptPaths: ownPaths, bindings: this.bindings, isOff: () => this.killSwitch.isOff, isLoaded: () => this.loaded, isPersonal: (url) => personal.has(url) });
    this.trust = new TrustRule(selfOrigin);

    // Server push (Server-Timing, webpp-load) into the policy's pushed-service-time input.
    this.pushed = new PushedLoad({ sink: policyPushSink(this.policy, () => void this.store.changed()), isKnownServer: (server) => this.trust.isKnownServer(server) });
    // The client aggregate for first visits (the aggregate add-on; read only when the own origin turns it on).
    this.aggregate =
      init.clientAggregate?.({ policy: this.policy, selfOrigin, isKnownServer: (server) => this.trust.isKnownServer(server), post: (url, requestInit) => plainFetch(new Request(url, requestInit)) }) ??
      NO_CLIENT_AGGREGATE;
    // The learn stage (measurements to the policy) and core's engine with the worker's IO.
    const probeUrls = new ProbeUrls();
    const connections = new ConnectionQueue({ now: () => performance.now() });
    ({ engine: this.engine, samples: this.samples } = workerEngine({
      policy: this.policy,
      options,
      selfOrigin,
      random,
      probeUrls,
      connections,
      plainFetch,
      reporter,
      store: this.store,
      observeResourceTiming: init.observeResourceTiming !== false,
      pushed: this.pushed,
    }));
    const observe = this.engine.observe.bind(this.engine);
    const failed = (server: ServerId): void => observe({ server, purpose: 'request', outcome: 'network-error', nowMs: Date.now() });
    // Content integrity (the integrity add-on): a replica with wrong bytes is a failed server.
    this.integrity = init.integrity?.({ storage, selfOrigin, flushDelayMs: options.flushDelayMs, reporter, failed, ...(init.verifyBufferBytes === undefined ? {} : { maxBufferBytes: init.verifyBufferBytes }) }) ?? NO_INTEGRITY;

    const { headers, controlCheck } = headerStages({
      options,
      selfOrigin,
      storage,
      bindings: this.bindings,
      integrity: this.integrity,
      trust: this.trust,
      killSwitch: this.killSwitch,
      reporter,
      plainFetch,
      pushed: this.pushed,
      aggregate: this.aggregate,
    });
    this.headers = headers;
    // Offline copies only when given (the webpp-sw-offline.js add-on, or a Workbox worker).
    this.offline = init.offlineCopies?.({ options, storage, selfOrigin, reporter, ...(init.openOfflineCache ? { openCache: init.openOfflineCache } : {}) }) ?? NO_OFFLINE_COPIES;
    // In a worker only: its diagnostic request and its messages to pages are the browser's.
    const unusable = 'registration' in globalThis ? new UnusableReplicas({ selfOrigin, reporter }) : undefined;
    this.bindStage = new BindStage({
      engine: this.engine,
      selfOrigin,
      reporter,
      headers: this.headers,
      samples: this.samples,
      integrity: this.integrity,
      resume: new ResumeStage({ resumeMinBytes: options.resumeMinBytes, reporter, observe }),
      offline: this.offline,
      controlCheck,
      trust: this.trust,
      probeUrls,
      staleBindings: new StaleBindings(),
      personal,
      // Replicas the worker cannot use (CORS, opaque, redirected) are reported once (unusable-replicas.ts).
      track: (fetcher) => connections.track(unusable === undefined ? fetcher : unusable.watch(fetcher)),
      afterRequest: (candidates) => this.afterRequest(candidates),
      decisionMade: reportDecision(reporter),
      engineHooks: new EngineHooks({ policy: this.policy, engine: this.engine, queue: connections, reporter }),
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
    return this.router.route(request);
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
      if (this.bindings.learning) await this.bindings.settled();
      const enabled = this.isEnabled;
      const resolved = enabled ? this.router.resolved(request) : undefined;
      if (resolved && (request.method === 'GET' || request.method === 'HEAD')) return await this.bindStage.handle(request, resolved, io);
      if (enabled && this.router.isObservable(request)) return await observeRequest(request, io, { reporter: this.reporter, headers: this.headers, offline: this.offline, ...(this.offline.enabled ? {} : { quiet: (quiet: Request) => this.router.noteQuiet(quiet) }) });
      return await io.fetch(request).catch(() => Response.error());
    } catch (error) {
      this.reporter.count('internalErrors');
      this.reporter.event({ type: 'internal-error', atMs: Date.now(), message: String(error), url: request.url });
      return fetch(request).catch(() => Response.error());
    }
  }

  /**
   * Reads the bindings of an own-origin response that the site's own cache answered with (a
   * Workbox precache: replicaCacheLearningPlugin), which the worker never fetched itself.
   * Responses for other origins are ignored (trust rule).
   */
  learnFromCache(requestUrl: string, response: Response, waitUntil: (promise: Promise<unknown>) => void): void {
    if (!isSameOrigin(requestUrl, this.selfOrigin)) return;
    try {
      this.headers.learnCachedBindings(response, requestUrl, waitUntil);
    } catch {
      // Learning never affects a page.
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
      pushed: this.pushed.views(),
      aggregate: this.aggregate.view(),
    };
  }

  /**
   * Puts a stage in front of the bind and observe stages: batch transmission and the
   * logical-URL cache (batch/batch-stage.ts, installBatching; docs/batching.md). The first
   * stage installed holds.
   */
  useFrontStage(stage: FrontStage): void {
    this.batching ??= stage;
  }

  /**
   * The worker's whole fetch pipeline for one event: the batch stage (if enabled), then
   * route and respond. Returns false when the worker does not answer (no respondWith), so
   * the browser fetches the request itself. `fetcher` sends the event's requests (the bundled
   * worker's takes a navigation's preload response: navigation-preload.ts).
   */
  handleFetch(event: FetchEvent, fetcher: (request: Request) => Promise<Response> = (request) => fetch(request)): boolean {
    if (this.batching?.handleFetch(event)) return true;
    let route: Route;
    try {
      route = this.route(event.request);
    } catch {
      return false; // fail open: the browser fetches as if there were no worker
    }
    if (route === 'pass') return false;
    event.respondWith(this.respond(event.request, { fetch: fetcher, waitUntil: (promise) => event.waitUntil(promise) }));
    return true;
  }

  /** Writes pending policy state and bindings changes to IndexedDB now. */
  async flush(): Promise<void> {
    this.samples.expire();
    await Promise.all([this.store.flushNow(), this.bindings.flushNow(), this.integrity.flush(), this.offline.flush()]);
  }

  /**
   * Answers the page script's messages ({type: 'webpp:state'} and {type: 'webpp:flush'},
   * replies on the transferred MessagePort). Idempotent.
   */
  attachMessageListener(scope: Pick<ServiceWorkerGlobalScope, 'addEventListener'>): void {
    if (this.messageListenerAttached) return;
    this.messageListenerAttached = true;
    listenToPages(scope, { ready: this.ready, snapshot: () => this.snapshot(), flush: () => this.flush(), relocate: (query) => this.relocateEmbeds(query) });
  }


  /** Where a page's <object>/<embed> elements should load from (embed-relocation.ts). */
  private relocateEmbeds(query: RelocateQuery): Promise<(string | null)[]> {
    const failed = new Set(policyServerViews(this.policy, Date.now()).filter((view) => view.state === 'failed').map((view) => view.server));
    return relocateEmbeds(query, {
      resolve: (url) => (this.isEnabled ? this.router.resolved(new Request(url)) : undefined),
      ordered: (resolved) => {
        const physicalByServer = new Map(resolved.physicalUrls.map((url) => [serverOf(url), url]));
        const plan = this.engine.plan({ logicalUrl: resolved.logical, method: 'GET', candidates: [...physicalByServer.keys()] }, (server) => physicalByServer.get(server));
        return plan.map((attempt) => attempt.target);
      },
      isFailed: (server) => failed.has(server),
      servedPage: (pageUrl) => {
        const decisions = this.reporter.recentDecisions();
        for (let i = decisions.length - 1; i >= 0; i--) if (decisions[i]!.navigation && decisions[i]!.logicalUrl === pageUrl) return decisions[i]!.servedBy;
        return undefined;
      },
      fetch: this.plainFetch,
    });
  }

  /** After every bound request: the policy's background requests (Figure 4), then a batched state write. */
  private async afterRequest(candidates: readonly ServerId[]): Promise<void> {
    try {
      this.samples.expire();
      await new Promise<void>((resolve) => this.engine.maintain(candidates, resolve));
      await this.store.changed();
      await this.aggregate.maybeReport();
    } catch {
      // Background work never affects a page.
    }
  }



  private async load(): Promise<void> {
    try {
      // The whole state in one read (one IndexedDB transaction): the first fetch event waits for it.
      const [control, table, bindings, digests] = await readAll(this.storage, [CONTROL_KEY, LATENCY_TABLE_KEY, BINDINGS_KEY, DIGESTS_KEY]);
      this.store.restore(table);
      this.bindings.restore(bindings);
      this.integrity.restore(digests);
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
