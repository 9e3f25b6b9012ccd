/**
 * Core's client engine as the worker runs it: the policy named in the options (core's
 * registry), fetch() and real timers (fetch-io.ts), background requests as HEADs of known
 * resources (maintenance.ts), samples from Resource Timing (samples.ts), and the lifecycle
 * callbacks that persist the policy's state and feed the state reporter (telemetry.ts).
 */
import { ClientEngine, combineHooks, createWebppPolicy, webppOptionsFrom } from '@webpp/core';
import type { ClientPolicy, PolicyDeps, RandomSource } from '@webpp/core';
import type { PolicyResolver } from './addons.js';
import { workerTimeouts } from './config.js';
import type { WorkerOptions } from './config.js';
import { CONNECTIONS_PER_HOST, type ConnectionQueue } from './connection-queue.js';
import { fetchIO } from './fetch-io.js';
import type { ExchangeSender } from './fetch-io.js';
import { backgroundSender, backgroundTarget } from './maintenance.js';
import type { PolicyStore } from './policy-store.js';
import type { PushedLoad } from './pushed-load.js';
import { SampleStage } from './samples.js';
import type { ProbeUrls } from './server-memory.js';
import type { StateReporter } from './state-reporter.js';
import { telemetryHooks } from './telemetry.js';

export type WorkerEngine = ClientEngine<Response, ExchangeSender>;

/**
 * The default worker's only built-in policy, `webpp` (core's policies/webpp). The other
 * policies of core's registry (the paper's, the evaluation's baselines) come from the
 * `policies` add-on (addons.ts) or, for a worker bundled by the site, from core's createPolicy.
 */
const webppPolicyOnly: PolicyResolver = (name: string, deps: PolicyDeps, options?: Record<string, unknown>) =>
  name === 'webpp' ? createWebppPolicy(deps, webppOptionsFrom(options)) : undefined;

/**
 * The policy named in the options, from `policies`; when the name is unknown or its options
 * are invalid, the paper's extended Refresh if `policies` has it, else `webpp` with its defaults.
 */
export function namedPolicy(options: WorkerOptions, random: RandomSource, errors: string[], policies: PolicyResolver = webppPolicyOnly): ClientPolicy {
  const deps = { random, now: Date.now };
  const settings = { preset: options.preset, selection: options.selection, webpp: options.webpp };
  const fallback = (): ClientPolicy => {
    let refresh: ClientPolicy | undefined;
    try {
      refresh = policies('refresh', deps, settings);
    } catch {
      // A bad selection parameter (reported above): the preset's own values.
      refresh = policies('refresh', deps, { preset: options.preset });
    }
    errors[errors.length - 1] += `; using "${refresh ? 'refresh' : 'webpp'}"`;
    return refresh ?? createWebppPolicy(deps);
  };
  try {
    const named = policies(options.policy, deps, settings);
    if (named) return named;
    errors.push(`unknown policy "${options.policy}"`);
  } catch (error) {
    errors.push(`policy "${options.policy}": ${error instanceof Error ? error.message : String(error)}`);
  }
  return fallback();
}

export interface WorkerEngineOptions {
  policy: ClientPolicy;
  options: WorkerOptions;
  selfOrigin: string;
  random: RandomSource;
  probeUrls: ProbeUrls;
  connections: ConnectionQueue;
  plainFetch: (request: Request) => Promise<Response>;
  reporter: StateReporter;
  store: PolicyStore;
  observeResourceTiming: boolean;
  pushed?: PushedLoad;
}

export function workerEngine(init: WorkerEngineOptions): { engine: WorkerEngine; samples: SampleStage } {
  const { policy, options, selfOrigin, random, probeUrls, connections, reporter, store } = init;
  // eslint-disable-next-line prefer-const -- assigned after the sample stage whose callback reads it
  let engine: WorkerEngine | undefined;
  const samples = new SampleStage({
    queue: connections,
    observe: (sample) => engine?.observe(sample),
    onCacheHit: () => reporter.count('cacheHitsSkipped'),
    onQueued: () => reporter.count('queuedSamplesSkipped'),
    observeResourceTiming: init.observeResourceTiming,
  });
  const background = backgroundSender({ selfOrigin, probeUrls, random, fetch: connections.track(init.plainFetch), samples, ...(init.pushed ? { pushed: init.pushed } : {}) });
  engine = new ClientEngine({
    policy,
    io: fetchIO(background),
    backgroundTarget: backgroundTarget(probeUrls, random),
    backgroundTimeoutMs: workerTimeouts(options).timeoutCeilingMs,
    // A timeout starts when the request could be served, not while it waits behind this
    // client's own exchanges: the policy's answer for the replica (the connections for the
    // protocol it learnt from nextHopProtocol, or the server's own concurrency when lower),
    // else Chromium's six connections per host (HTTP/1.1).
    connectionsPerServer: (server) => policy.exchangesAtOnce?.(server) ?? CONNECTIONS_PER_HOST,
    // Late binding frees held requests as exchanges end, which the worker learns from Resource Timing (engine-hooks.ts).
    lateBinding: init.observeResourceTiming,
    hooks: combineHooks(
      { sampleWillBeObserved: (sample) => samples.noteEngineSample(sample), sampleObserved: () => void store.changed() },
      telemetryHooks(reporter, policy),
    ),
  });
  return { engine, samples };
}
