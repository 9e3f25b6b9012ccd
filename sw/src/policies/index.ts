/**
 * The evaluation policies (issue 7; paper Section 6): the baselines Web++ is measured
 * against, on the policy seam of policy.ts. `registerEvaluationPolicies()` makes them
 * available by name, so a page chooses one with `?policy=` on the worker's URL (or
 * `data-policy` on the script tag):
 *
 *   single-1 … single-9   every request to the n-th replica (directory order), no failover
 *   random                a random replica per request, no failover
 *   round-robin           the replicas in turn, no failover
 *   optimal               every replica at once, the first response wins
 *   hedged                extended Refresh + a second request at the best replica's p95
 *
 * Web++ itself is the default policy, `refresh`, with `preset=paper` or `preset=fast`.
 */
import { registerPolicy } from '../policy.js';
import { hedgedPolicy } from './hedged.js';
import { optimalPolicy } from './optimal.js';
import { randomPolicy } from './random.js';
import { roundRobinPolicy } from './round-robin.js';
import { singleServerPolicy } from './single-server.js';

export { NO_TIMEOUT_MS } from './baseline.js';
export { hedgedPolicy, type HedgeOptions } from './hedged.js';
export { optimalPolicy } from './optimal.js';
export { randomPolicy } from './random.js';
export { roundRobinPolicy } from './round-robin.js';
export { singleServerPolicy } from './single-server.js';

/** Highest n of the registered `single-n` policies. */
export const MAX_SINGLE_SERVER_POSITION = 9;

export const EVALUATION_POLICY_NAMES: readonly string[] = Object.freeze([
  ...Array.from({ length: MAX_SINGLE_SERVER_POSITION }, (_, i) => `single-${i + 1}`),
  'random',
  'round-robin',
  'optimal',
  'hedged',
]);

export function registerEvaluationPolicies(): void {
  for (let position = 1; position <= MAX_SINGLE_SERVER_POSITION; position++) {
    registerPolicy(`single-${position}`, () => singleServerPolicy(position));
  }
  registerPolicy('random', ({ random }) => randomPolicy(random));
  registerPolicy('round-robin', () => roundRobinPolicy());
  registerPolicy('optimal', () => optimalPolicy());
  registerPolicy('hedged', ({ config, random }) => hedgedPolicy(config, random));
}
