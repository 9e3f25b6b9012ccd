/**
 * The stages of the ReplicaClient built from the worker's options: who reports what to the
 * state reporter, and what a failure means for the engine. Wiring only; each stage's logic
 * lives in its own module.
 */
import type { BindingsStore } from './bindings-store.js';
import { workerTimeouts } from './config.js';
import type { WorkerOptions } from './config.js';
import { ControlCheck } from './control-check.js';
import { HeaderLearning } from './header-learning.js';
import type { IntegrityStage } from './integrity-stage.js';
import type { KillSwitch } from './kill-switch.js';
import type { PushedLoad } from './pushed-load.js';
import type { ClientAggregateStage } from './client-aggregate-stage.js';
import { buildProbeRequest } from './physical-request.js';
import type { StateReporter } from './state-reporter.js';
import { StaticBindings } from './static-bindings.js';
import type { KeyValueStore } from './storage.js';
import type { TrustRule } from './trust.js';

export interface HeaderWiring {
  options: WorkerOptions;
  selfOrigin: string;
  storage: KeyValueStore;
  bindings: BindingsStore;
  integrity: IntegrityStage;
  trust: TrustRule;
  killSwitch: KillSwitch;
  reporter: StateReporter;
  plainFetch: (request: Request) => Promise<Response>;
  pushed?: PushedLoad;
  aggregate?: ClientAggregateStage;
}

/** Header learning, and the own-origin check whose answers it reads (control-check.ts). */
export function headerStages(wiring: HeaderWiring): { headers: HeaderLearning; controlCheck: ControlCheck } {
  const { options, selfOrigin, plainFetch } = wiring;
  // eslint-disable-next-line prefer-const -- assigned after the header stage whose callbacks read it
  let controlCheck: ControlCheck | undefined;
  const headers = new HeaderLearning({
    bindings: wiring.bindings,
    integrity: wiring.integrity,
    trust: wiring.trust,
    killSwitch: wiring.killSwitch,
    staticBindings: new StaticBindings({ selfOrigin, storage: wiring.storage, fetch: plainFetch }),
    reporter: wiring.reporter,
    ...(wiring.pushed ? { pushed: wiring.pushed } : {}),
    ...(wiring.aggregate ? { aggregate: wiring.aggregate } : {}),
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
  return { headers, controlCheck };
}
