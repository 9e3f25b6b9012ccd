/**
 * @webpp/sw: the Web++ smart client as a service worker. Sites either add
 * `<script src="/webpp.js"></script>` (the bundled worker) or import these into their own
 * Workbox worker and bundle it themselves.
 */
export { ReplicaStrategy, replicaRouteMatcher, createReplicaRouteMatcher, getReplicaClient, replicaCacheLearningPlugin } from './workbox.js';
export type { ReplicaStrategyOptions, ReplicaClientWorkboxOptions } from './workbox.js';
export { ReplicaClient } from './replica-client.js';
export type { ReplicaClientOptions, RespondIO, Route } from './replica-client.js';
// Policies live in one registry in @webpp/core (packages/core/src/policies), shared with the simulator.
export { registerPolicy, createPolicy, policyNames } from '@webpp/core';
// The paper's latency table in full in webpp.state() for the table policies a resolver makes (table-views.ts).
export { withTableViews } from './table-views.js';
export type { ClientPolicy, PlannedAttempt, PlanInput, PolicyFactory, PolicyDeps } from '@webpp/core';
export { parseWorkerOptions, resolveWorkerOptions, DEFAULT_WORKER_OPTIONS } from './config.js';
export type { WorkerOptions, WorkerOptionsInput, InternalOverrides, ParsedWorkerOptions } from './config.js';
export { WORKER_OPTION_SCHEMA } from './options-schema.js';
export type { PublicWorkerOptions } from './options-schema.js';
export { idbKeyValueStore, memoryKeyValueStore } from './storage.js';
export type { KeyValueStore } from './storage.js';
export { telemetryHooks } from './telemetry.js';
export { EVENT_CHANNEL, STATE_REQUEST, FLUSH_REQUEST } from './messages.js';
export type {
  AttemptOutcome,
  AttemptRecord,
  DecisionRecord,
  ServerView,
  WebppEvent,
  WebppEventType,
  WorkerCounters,
  WorkerStateSnapshot,
} from './messages.js';
export { SW_VERSION } from './version.js';
export { OFFLINE_COPY_HEADER } from './offline-cache.js';
export * from './batch/index.js';
