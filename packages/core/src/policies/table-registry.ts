/**
 * The registry's policies beside `webpp`: the paper's extended Refresh and its presets,
 * `hedged`, and the evaluation's baselines. Apart from registry.ts so that the worker's
 * policies add-on (sw webpp-sw-policies.js) carries these without a second copy of the
 * `webpp` policy, which the default worker already has (issue 26 §4).
 */
import { FAST_PRESET, PAPER_DEFAULTS } from '../config.js';
import type { ClientPolicy, PolicyDeps, PolicyFactory } from '../engine/policy-types.js';
import { optimalCompletePolicy, optimalPolicy, randomPolicy, roundRobinPolicy, singleServerPolicy } from './baselines.js';
import { extendedRefreshPolicy } from './extended-refresh.js';
import { hedgedPolicy } from './hedged.js';
import { selectionFrom } from './table-policy.js';

export const TABLE_POLICY_FACTORIES: readonly (readonly [string, PolicyFactory])[] = [
  ['paper', (deps, options) => extendedRefreshPolicy(deps, 'paper', selectionFrom(options, PAPER_DEFAULTS))],
  ['fast', (deps, options) => extendedRefreshPolicy(deps, 'fast', selectionFrom(options, FAST_PRESET))],
  ['refresh', (deps, options) => extendedRefreshPolicy(deps, 'refresh', selectionFrom(options))],
  ['hedged', (deps, options) => hedgedPolicy(deps, selectionFrom(options), (options?.['hedge'] ?? {}))],
  ['random', (deps, options) => randomPolicy(deps, selectionFrom(options))],
  ['round-robin', (deps, options) => roundRobinPolicy(deps, selectionFrom(options), Number(options?.['startAt'] ?? 0))],
  [
    'single-server',
    (deps, options) => singleServerPolicy(deps, selectionFrom(options), { position: Number(options?.['position'] ?? 1), ...(typeof options?.['server'] === 'string' ? { server: options['server'] } : {}) }),
  ],
  ['optimal', (deps, options) => optimalPolicy(deps, selectionFrom(options))],
  ['optimal-complete', (deps, options) => optimalCompletePolicy(deps, selectionFrom(options))],
];

/** `single-<n>` (n = 1…9): single-server at position n; undefined for any other name. */
export function singleAtPosition(name: string, deps: PolicyDeps, options?: Record<string, unknown>): ClientPolicy | undefined {
  const single = /^single-([1-9])$/.exec(name);
  return single ? singleServerPolicy(deps, selectionFrom(options), { position: Number(single[1]) }) : undefined;
}

const tableFactories = new Map(TABLE_POLICY_FACTORIES);

/**
 * A policy of the table family by name (not `webpp`, not policies added with
 * registerPolicy), or undefined.
 * @throws RangeError when the options are invalid.
 */
export function createTablePolicy(name: string, deps: PolicyDeps, options?: Record<string, unknown>): ClientPolicy | undefined {
  return tableFactories.get(name)?.(deps, options) ?? singleAtPosition(name, deps, options);
}
