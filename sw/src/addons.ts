/**
 * Opt-in code for the bundled worker (docs/service-worker.md, "What the worker loads").
 *
 * A service worker cannot `import()` at run time, and `importScripts` of a script it has not
 * seen fetches only during the worker's first evaluation. So the default bundle
 * (webpp-sw.js) carries what a script-tag site uses by default, and each opt-in feature is
 * its own script beside it (webpp-sw-<name>.js), imported during the first evaluation when
 * the registration's options ask for it: `features=batch,offline,integrity,aggregate`
 * (data-features="…") loads batch transmission, offline copies, content integrity and the
 * client aggregate for first visits; a policy other than `webpp` (the evaluation's baselines, the paper's
 * policies) loads `policies`. An add-on script registers itself in `self.webppAddons`.
 */
import type { ClientPolicy, PolicyDeps } from '@webpp/core';
import type { ClientAggregateFactory } from './client-aggregate-stage.js';
import type { IntegrityFactory } from './integrity-stage.js';
import type { OfflineCopiesFactory } from './offline-copies.js';
import type { ReplicaClient } from './replica-client.js';

/** Makes the policy named `name` with the options given, or undefined for a name it does not know. */
export type PolicyResolver = (name: string, deps: PolicyDeps, options?: Record<string, unknown>) => ClientPolicy | undefined;

export interface WorkerAddon {
  /** Offline copies (the offline add-on). */
  offlineCopies?: OfflineCopiesFactory;
  /** Content integrity (the integrity add-on). */
  integrity?: IntegrityFactory;
  /** The client aggregate for first visits (the aggregate add-on). */
  clientAggregate?: ClientAggregateFactory;
  /** Policies this add-on adds (the evaluation's). */
  policies?: PolicyResolver;
  /** Installs the add-on's stage in front of the client (batch transmission). */
  install?(client: ReplicaClient, scope: ServiceWorkerGlobalScope): void;
}

/** The add-on of the policies beside `webpp`. */
export const POLICIES_ADDON = 'policies';

interface AddonRegistry {
  webppAddons?: Record<string, WorkerAddon>;
}

/** Called by an add-on script when it is evaluated. */
export function registerAddon(name: string, addon: WorkerAddon): void {
  const registry = globalThis as AddonRegistry;
  (registry.webppAddons ??= {})[name] = addon;
}

/**
 * Imports the add-ons named, from beside the worker's own script (`scriptUrl`), and returns
 * those that registered. An add-on that fails to load is reported in `errors`; the worker
 * runs without it (fails open).
 */
export function loadAddons(names: readonly string[], scriptUrl: string, importScripts: (url: string) => void, errors: string[]): Record<string, WorkerAddon> {
  const loaded: Record<string, WorkerAddon> = {};
  const folder = new URL('.', scriptUrl);
  const version = new URL(scriptUrl).searchParams.get('v');
  for (const name of names) {
    const url = new URL(`webpp-sw-${name}.js`, folder);
    if (version !== null) url.searchParams.set('v', version);
    try {
      importScripts(url.href);
      const addon = (globalThis as AddonRegistry).webppAddons?.[name];
      if (addon) loaded[name] = addon;
      else errors.push(`${url.pathname} registered no add-on "${name}"`);
    } catch (error) {
      errors.push(`could not load ${url.pathname}: ${error instanceof Error ? error.message : String(error)}`);
    }
  }
  return loaded;
}
