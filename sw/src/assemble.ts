/**
 * Builds a ReplicaClient's parts from its options (wiring only; each part's logic lives in
 * its own module): the stores, core's engine with the named policy, the request path's
 * shared state (plan.ts RequestPath) and its lifecycle plugins, in the order the path calls
 * them (plugins.ts). Opt-in features (offline copies, integrity, the client aggregate) add
 * their plugins only when they are on.
 */
import { WEBPP_DEFAULTS } from '@webpp/core';
import type { ClientPolicy, ServerId } from '@webpp/core';
import { BindingsStore } from './bindings-store.js';
import { NO_CLIENT_AGGREGATE } from './client-aggregate-stage.js';
import type { ClientAggregateStage } from './client-aggregate-stage.js';
import type { ReplicaClientOptions } from './client-options.js';
import { resolveWorkerOptions, workerTimeouts } from './config.js';
import type { WorkerOptions } from './config.js';
import { ConnectionQueue, connectionPlugin } from './connection-queue.js';
import { ControlCheck, controlCheckPlugin } from './control-check.js';
import { DirectRoute, directPlugin } from './direct.js';
import { engineHooksPlugin } from './engine-hooks.js';
import { HeaderLearning, headerLearningPlugin } from './header-learning.js';
import { NO_INTEGRITY } from './integrity-stage.js';
import type { IntegrityStage } from './integrity-stage.js';
import { KillSwitch, pageNotifier } from './kill-switch.js';
import { backgroundPlugin } from './maintenance.js';
import { NO_OFFLINE_COPIES } from './offline-copies.js';
import type { OfflineCopies } from './offline-copies.js';
import { OwnOriginUrls, ownOriginAnswersPlugin } from './own-origin-answers.js';
import { buildProbeRequest } from './physical-request.js';
import type { RequestPath } from './plan.js';
import { Lifecycle } from './plugins.js';
import type { WorkerPlugin } from './plugins.js';
import { PolicyStore } from './policy-store.js';
import { PushedLoad, policyPushSink } from './pushed-load.js';
import { resumePlugin } from './resume.js';
import { samplesPlugin } from './samples.js';
import type { SampleStage } from './samples.js';
import { ProbeUrls, StaleBindings, serverMemoryPlugin } from './server-memory.js';
import { SizeMemory } from './size-memory.js';
import { StateReporter, broadcastPublisher } from './state-reporter.js';
import { StaticBindings } from './static-bindings.js';
import { idbKeyValueStore } from './storage.js';
import type { KeyValueStore } from './storage.js';
import { telemetryPlugin } from './telemetry.js';
import { TrustRule } from './trust.js';
import { UnusableReplicas } from './unusable-replicas.js';
import { namedPolicy, workerEngine } from './worker-engine.js';
import type { WorkerEngine } from './worker-engine.js';

export interface ClientParts {
  options: WorkerOptions;
  configErrors: string[];
  policy: ClientPolicy;
  engine: WorkerEngine;
  selfOrigin: string;
  storage: KeyValueStore;
  plainFetch: (request: Request) => Promise<Response>;
  reporter: StateReporter;
  killSwitch: KillSwitch;
  store: PolicyStore;
  bindings: BindingsStore;
  /** Paths of webpp's own scripts on the page's origin (never bound; route.ts). */
  ownScriptPaths: readonly string[];
  /** Logical URLs only the own origin answers, personal or redirecting (own-origin-answers.ts; never bound). */
  ownOnly: OwnOriginUrls;
  trust: TrustRule;
  pushed: PushedLoad;
  aggregate: ClientAggregateStage;
  samples: SampleStage;
  integrity: IntegrityStage;
  offline: OfflineCopies;
  headers: HeaderLearning;
  /** Bound requests left to the browser when the own origin is the plan's sole first choice (direct.ts). */
  direct: DirectRoute;
  /** What the stages of a bound request share (plan.ts). */
  path: RequestPath;
}

export function assemble(init: ReplicaClientOptions): ClientParts {
  const parsed = init.parsed ?? resolveWorkerOptions(init.settings, init.internal);
  const options = parsed.options;
  const configErrors = [...parsed.errors];
  const random = init.random ?? Math.random;
  const policy = init.policy ?? namedPolicy(options, random, configErrors, init.policies);
  const location = (globalThis as { location?: { origin: string; pathname: string } }).location;
  const selfOrigin = init.selfOrigin ?? location?.origin ?? '';
  const ownScriptPaths = init.ownScriptPaths ?? ['/webpp.js', ...(location?.pathname ? [location.pathname] : [])];
  const storage = init.storage ?? idbKeyValueStore();
  const plainFetch = init.fetch ?? ((request: Request) => fetch(request));

  // Live events go out only while a page listens (webpp.on, the dashboard), unless the caller publishes itself.
  // eslint-disable-next-line prefer-const -- the publisher's subscribe callback reads the reporter built with it
  let reporter: StateReporter;
  const publish = init.publish ?? broadcastPublisher((leaseMs) => reporter.subscribe(leaseMs));
  reporter = new StateReporter({ historySize: options.historySize, onlyWhenSubscribed: init.publish === undefined, ...(publish ? { publish } : {}) });
  const killSwitch = new KillSwitch({
    storage,
    offRetryMs: options.offRetryMs,
    unregister: init.unregister ?? (() => (globalThis as unknown as { registration?: ServiceWorkerRegistration }).registration?.unregister() ?? Promise.resolve()),
    notifyPages: init.notifyPages ?? pageNotifier(),
  });
  const store = new PolicyStore({ policy, storage, flushDelayMs: options.flushDelayMs, onFlushed: () => reporter.count('tableFlushes') });
  const bindings = new BindingsStore({ storage, flushDelayMs: options.flushDelayMs });
  const ownOnly = new OwnOriginUrls();
  const trust = new TrustRule(selfOrigin);
  const isKnownServer = (server: ServerId): boolean => trust.isKnownServer(server);

  // Server push (Server-Timing, webpp-load) into the policy's pushed-service-time input.
  const pushed = new PushedLoad({ sink: policyPushSink(policy, () => void store.changed()), isKnownServer });
  // The client aggregate for first visits (the aggregate add-on; read only when the own origin turns it on).
  const aggregate = init.clientAggregate?.({ policy, selfOrigin, isKnownServer, post: (url, requestInit) => plainFetch(new Request(url, requestInit)) }) ?? NO_CLIENT_AGGREGATE;
  const probeUrls = new ProbeUrls();
  const connections = new ConnectionQueue({ now: () => performance.now() });
  const { engine, samples } = workerEngine({ policy, options, selfOrigin, random, probeUrls, connections, plainFetch, reporter, store, observeResourceTiming: init.observeResourceTiming !== false, pushed });
  const observe = engine.observe.bind(engine);
  const failed = (server: ServerId): void => observe({ server, purpose: 'request', outcome: 'network-error', nowMs: Date.now() });
  // Content integrity (the integrity add-on): a replica with wrong bytes is a failed server.
  const integrity = init.integrity?.({ storage, selfOrigin, flushDelayMs: options.flushDelayMs, reporter, failed, ...(init.verifyBufferBytes === undefined ? {} : { maxBufferBytes: init.verifyBufferBytes }) }) ?? NO_INTEGRITY;
  // Offline copies only when given (the webpp-sw-offline.js add-on, or a Workbox worker).
  const offline = init.offlineCopies?.({ options, storage, selfOrigin, reporter, ...(init.openOfflineCache ? { openCache: init.openOfflineCache } : {}) }) ?? NO_OFFLINE_COPIES;

  // Header learning, and the own-origin check whose answers it reads (control-check.ts).
  // eslint-disable-next-line prefer-const -- assigned after the header stage whose callbacks read it
  let controlCheck: ControlCheck | undefined;
  const headers = new HeaderLearning({
    bindings,
    integrity,
    trust,
    killSwitch,
    staticBindings: new StaticBindings({ selfOrigin, storage, fetch: plainFetch }),
    reporter,
    pushed,
    aggregate,
    heardFromOwnOrigin: () => controlCheck?.heard(),
  });
  controlCheck = new ControlCheck({
    selfOrigin,
    intervalMs: options.controlCheckMs,
    now: () => performance.now(),
    head: (url, signal) => plainFetch(buildProbeRequest(url, selfOrigin, signal, undefined, 'follow')), // the page's own headers
    timeoutMs: () => workerTimeouts(options).timeoutCeilingMs,
    answered: (response, url) => {
      const started: Promise<unknown>[] = [];
      headers.learnFrom(response, url, (promise) => void started.push(promise));
      return Promise.allSettled(started);
    },
  });

  const memory = { probeUrls, staleBindings: new StaleBindings(), sizes: new SizeMemory() };
  const direct = new DirectRoute({
    selfOrigin,
    engine,
    sizes: memory.sizes,
    reporter,
    resumeMinBytes: options.resumeMinBytes,
    // The most often the policy refreshes a server: an exploration request more often would teach it nothing new.
    exploreEveryMs: options.webpp['refreshMinIntervalMs'] ?? WEBPP_DEFAULTS.refreshMinIntervalMs,
    // Offline copies keep every bound answer: those must come through the worker.
    enabled: !offline.enabled,
    staleBindings: memory.staleBindings,
    storage,
    flushDelayMs: options.flushDelayMs,
  });
  const inWorker = 'registration' in globalThis;
  // The lifecycle plugins, one per line, in the order each callback runs them (plugins.ts;
  // docs/service-worker.md "The request path" is generated from these lines).
  const plugins: (WorkerPlugin | false)[] = [
    telemetryPlugin(reporter, policy.name),
    connectionPlugin(connections),
    // Replicas the worker cannot use (CORS, opaque, redirected) are reported once; in a worker only.
    inWorker && new UnusableReplicas({ selfOrigin, reporter }).plugin(),
    samplesPlugin(samples),
    serverMemoryPlugin(memory),
    headerLearningPlugin(headers, trust),
    ownOriginAnswersPlugin({ selfOrigin, urls: ownOnly, reporter }),
    // handlerWillRespond, in this order: decide again at the head, the own-origin check, resume, integrity.
    engineHooksPlugin({ policy, engine, queue: connections, reporter, watchMinBytes: options.resumeMinBytes }),
    controlCheckPlugin(controlCheck, selfOrigin),
    resumePlugin({ resumeMinBytes: options.resumeMinBytes, reporter, observe }),
    // The add-ons' own plugins: none when they are off.
    integrity.plugin ?? false, // integrityPlugin (integrity-guard.ts)
    (offline.enabled && offline.plugin) ?? false, // offlinePlugin (offline-cache.ts)
    // Which replica answered each navigation: the proof of life of the page's direct requests.
    directPlugin(direct, selfOrigin),
    backgroundPlugin({ engine, samples, store }),
    aggregate.plugin ?? false, // clientAggregatePlugin (client-aggregate.ts)
  ];
  const lifecycle = new Lifecycle(plugins.filter((plugin) => plugin !== false));
  return {
    options,
    configErrors,
    policy,
    engine,
    selfOrigin,
    storage,
    plainFetch,
    reporter,
    killSwitch,
    store,
    bindings,
    ownScriptPaths,
    ownOnly,
    trust,
    pushed,
    aggregate,
    samples,
    integrity,
    offline,
    headers,
    direct,
    path: { engine, selfOrigin, lifecycle, memory, retryFailedRequests: !offline.enabled },
  };
}
