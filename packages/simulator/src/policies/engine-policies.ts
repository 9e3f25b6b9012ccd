/**
 * The simulator's policies: @webpp/core's registry policies run by core's client engine
 * (engine-driver.ts), under the report names the evaluation uses. No selection logic here.
 */
import { FAST_PRESET, PAPER_DEFAULTS, resolveSelectionConfig, type SelectionConfig } from '@webpp/core';
import { enginePolicy } from '../engine-driver.js';
import type { Policy } from '../policy.js';

export interface HedgeOptions {
  /** Hedge after this percentile of the best replica's latency. Default 95. */
  percentile?: number;
  /** EWMA weight of the latency estimate behind that percentile. Default 0.05. */
  ewmaWeight?: number;
}

export interface WebppPolicyOptions {
  /** Report name. Default "webpp-refresh" ("hedged" with `hedge`); "webpp" is core's v2 policy (registryPolicy). */
  name?: string;
  /** Parameters over `base`. */
  config?: Partial<SelectionConfig>;
  /** Default PAPER_DEFAULTS. */
  base?: Readonly<SelectionConfig>;
  /** One latency table shared by all clients (paper Section 4.1), or one each. Default true. */
  sharedTable?: boolean;
  /** Hedge requests at the best replica's p95 (core's `hedged` policy); default off. */
  hedge?: HedgeOptions;
  /** Resume a body that breaks off from the rest of the plan, as the worker does. Default true. */
  midBodyFailover?: boolean;
}

/** Core's extended Refresh (`refresh`, or `hedged` with a hedge) with the given parameters. */
export function webppPolicy(options: WebppPolicyOptions = {}): Policy {
  const config = resolveSelectionConfig(options.config ?? {}, options.base ?? PAPER_DEFAULTS);
  const hedge = options.hedge;
  const name = options.name ?? (hedge ? 'hedged' : 'webpp-refresh');
  return enginePolicy({
    name,
    description: `${hedge ? `hedged at p${hedge.percentile ?? 95} on ` : ''}extended Refresh (r=${config.ewmaWeight}, TTL=${config.ttlMs} ms, F=${config.probeIntervalMs} ms, S=${config.selectPercentile}, T=${config.timeoutPercentile})`,
    policy: hedge ? 'hedged' : 'refresh',
    options: { selection: config, ...(hedge ? { hedge } : {}) },
    shared: options.sharedTable ?? true,
    midBodyFailover: options.midBodyFailover ?? true,
  });
}

/** The paper's parameters (Figure 10): core's `paper`. */
export function webppPaperPolicy(): Policy {
  return webppPolicy({ name: 'webpp-paper', base: PAPER_DEFAULTS });
}

/** core's FAST_PRESET: short TTL and F (core's `fast`). */
export function webppFastPolicy(): Policy {
  return webppPolicy({ name: 'webpp-fast', base: FAST_PRESET });
}

/** FAST_PRESET selection plus a hedge at the best replica's p95 (core's `hedged`). */
export function hedgedPolicy(): Policy {
  return webppPolicy({ name: 'hedged', base: FAST_PRESET, hedge: {} });
}

/** Any policy of core's registry by its name (e.g. "paper", "webpp"), with its options. */
export function registryPolicy(name: string, options: Record<string, unknown> = {}, reportName = name): Policy {
  return enginePolicy({ name: reportName, description: `core policy "${name}"`, policy: name, options });
}

export function singleServerPolicy(server: string): Policy {
  const policy = enginePolicy({ name: `single-${server}`, description: `every request to server ${server} only (no replication)`, policy: 'single-server', options: { server } });
  return {
    ...policy,
    start(environment) {
      if (!environment.servers.includes(server)) throw new RangeError(`the scenario has no server "${server}"`);
      return policy.start(environment);
    },
  };
}

export function randomPolicy(): Policy {
  return enginePolicy({ name: 'random', description: 'a uniformly random replica per request, no failover', policy: 'random', shared: false });
}

export function roundRobinPolicy(): Policy {
  return enginePolicy({
    name: 'round-robin',
    description: 'replicas in turn (each client starting at its own offset), no failover',
    policy: 'round-robin',
    shared: false,
    clientOptions: (clientIndex) => ({ startAt: clientIndex }),
  });
}

/** Every replica in parallel; the first complete response wins (paper Section 6.1): core's `optimal-complete`. */
export function optimalPolicy(): Policy {
  return enginePolicy({ name: 'optimal', description: 'every replica in parallel; the first complete response wins (paper Section 6.1)', policy: 'optimal-complete', shared: false });
}

/** The worker's optimal: every replica at once, the first response head wins (core's `optimal`). */
export function optimalFirstHeadPolicy(): Policy {
  return enginePolicy({
    name: 'optimal',
    description: 'every replica in parallel; the first response head wins, the others are cancelled (the worker\'s optimal)',
    policy: 'optimal',
    shared: false,
  });
}
