export type * from './policy-types.js';
export type * from './engine-io.js';
export { ClientEngine, remainingPlan, type ClientEngineOptions, type RunOptions } from './client-engine.js';
export { runAttempts, classifyStatus, bodyIdleTimeoutMs, type RunContext } from './run-attempts.js';
export { BackgroundRequests, type BackgroundOptions } from './maintenance.js';
export { combineHooks } from './combine-hooks.js';
