/**
 * The one registry of client policies, shared by the worker, the simulator and the
 * evaluation. A name maps to a factory; options are plain JSON (a worker takes them from
 * its URL). Built in:
 *
 *   webpp             the default: size-aware, aging estimates, budgeted hedges and refreshes
 *                     (policies/webpp, docs/selection.md "The webpp policy"); options: the
 *                     names in webpp/options.ts, top level or under `webpp`
 *   paper             extended Refresh with PAPER_DEFAULTS (Figure 10)
 *   fast              extended Refresh with FAST_PRESET
 *   refresh           extended Refresh over the `preset` option (the worker's old default name)
 *   hedged            extended Refresh + a hedge at the best replica's p95
 *   random, round-robin, single-server, optimal, optimal-complete: the evaluation baselines
 *
 * Options of the extended-Refresh family and the baselines: `preset` ('paper' | 'fast'),
 * `selection` (SelectionConfig overrides); single-server: `position` (1-based) or `server`;
 * round-robin: `startAt`.
 */
import type { ClientPolicy, PolicyDeps, PolicyFactory } from '../engine/policy-types.js';
import { singleAtPosition, TABLE_POLICY_FACTORIES } from './table-registry.js';
import { createWebppPolicy, webppOptionsFrom } from './webpp/index.js';

const NAME = /^[a-z][a-z0-9-]{0,40}$/;

const factories = new Map<string, PolicyFactory>([['webpp', (deps, options) => createWebppPolicy(deps, webppOptionsFrom(options))], ...TABLE_POLICY_FACTORIES]);

/** Makes a policy available by name. Replaces an earlier one of that name. */
export function registerPolicy(name: string, factory: PolicyFactory): void {
  if (!NAME.test(name)) throw new RangeError(`policy name must match [a-z][a-z0-9-]* (got ${JSON.stringify(name)})`);
  factories.set(name, factory);
}

/** Names of the registered policies. */
export function policyNames(): string[] {
  return [...factories.keys()];
}

/**
 * A new instance of the named policy, or undefined when no policy has that name.
 * `single-<n>` (n = 1…9) is single-server at position n.
 * @throws RangeError when the options are invalid.
 */
export function createPolicy(name: string, deps: PolicyDeps, options?: Record<string, unknown>): ClientPolicy | undefined {
  const factory = factories.get(name);
  return factory ? factory(deps, options) : singleAtPosition(name, deps, options);
}
