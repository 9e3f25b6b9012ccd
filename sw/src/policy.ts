/**
 * The policy seam: how the replica fetcher orders (and optionally overlaps) its attempts
 * for one request, and which background requests it sends afterwards. The fetch logic
 * (timeouts, failover, response handling, samples) never changes; a policy only plans.
 *
 * The default is the paper's extended Refresh algorithm (Section 4.1, Figure 4), built on
 * @webpp/core. Evaluation policies (random, round-robin, single server, "optimal" send-to-
 * all, hedged) plug in with `registerPolicy` and are chosen by name (`?policy=…`).
 */
import { dueProbes, rankReplicas, refreshTarget } from '@webpp/core';
import type { LatencyTable, RandomSource, SelectionConfig, ServerId } from '@webpp/core';

/** One planned attempt. */
export interface PlannedAttempt {
  server: ServerId;
  /** Abort the attempt if no response headers arrive within this time. */
  timeoutMs: number;
  /** Why this server is here; shown in decisions (e.g. 'lowest-percentile'). */
  reason: string;
  /**
   * Hedging: start this attempt this many ms after the request began even though earlier
   * attempts are still waiting. Without it, an attempt starts only when an earlier one
   * fails. `0` starts at once ("optimal": ask every replica, take the first answer).
   */
  hedgeAfterMs?: number;
}

export interface PlanContext {
  /** The logical URL requested. */
  logicalUrl: string;
  request: Request;
  /** Servers holding the resource, in the origin's order of preference. */
  candidates: readonly ServerId[];
  table: LatencyTable;
  config: SelectionConfig;
  random: RandomSource;
}

export interface MaintenanceContext {
  /** Servers of the request just served (Figure 4's R). */
  candidates: readonly ServerId[];
  table: LatencyTable;
  nowMs: number;
}

export interface MaintenancePlan {
  /** Available servers to refresh with an asynchronous HEAD (their entry expired). */
  refresh: ServerId[];
  /** Failed servers due for an asynchronous HEAD probe (F doubles per probe). */
  probe: ServerId[];
}

export interface ReplicaPolicy {
  readonly name: string;
  /**
   * The attempts for one request, best first. The fetcher walks them: on a timeout, network
   * error or 5xx it marks the server failed and starts the next; on 404/410 it starts the
   * next; the first usable response wins and any other attempt still running is cancelled.
   * Servers that are not candidates are ignored.
   */
  plan(context: PlanContext): PlannedAttempt[];
  /** Background requests after a request. Policies without it send none. */
  maintenance?(context: MaintenanceContext): MaintenancePlan;
  /**
   * Optional: told of every time-to-first-byte sample the worker records (requests,
   * refreshes, probes), after the shared table took it; for policies that keep an estimate
   * of their own (e.g. the hedged policy's p95).
   */
  observeSample?(server: ServerId, ttfbMs: number): void;
}

/**
 * The paper's extended Refresh algorithm (Figure 4): the available server with the lowest
 * S-percentile (eq. (1)), random when every entry expired, failed servers last; the timeout
 * is the T-percentile. Afterwards an asynchronous HEAD refreshes the server with the oldest
 * expired entry, and failed servers are probed every F, F doubling.
 */
export function extendedRefreshPolicy(): ReplicaPolicy {
  return {
    name: 'refresh',
    plan: ({ candidates, table, random }) => rankReplicas(candidates, table, random),
    maintenance: ({ candidates, table, nowMs }) => {
      const refresh = refreshTarget(table, candidates);
      return { refresh: refresh === undefined ? [] : [refresh], probe: dueProbes(table, nowMs) };
    },
  };
}

export interface PolicyFactoryOptions {
  config: SelectionConfig;
  random: RandomSource;
}

export type PolicyFactory = (options: PolicyFactoryOptions) => ReplicaPolicy;

const registry = new Map<string, PolicyFactory>([['refresh', () => extendedRefreshPolicy()]]);

/** Makes a policy available by name (for `?policy=name`). Replaces an earlier one of that name. */
export function registerPolicy(name: string, factory: PolicyFactory): void {
  if (!/^[a-z][a-z0-9-]{0,40}$/.test(name)) throw new RangeError(`policy name must match [a-z][a-z0-9-]* (got ${JSON.stringify(name)})`);
  registry.set(name, factory);
}

/** Names of the registered policies. */
export function policyNames(): string[] {
  return [...registry.keys()];
}

/** A new instance of the named policy, or undefined when no policy has that name. */
export function createPolicy(name: string, options: PolicyFactoryOptions): ReplicaPolicy | undefined {
  return registry.get(name)?.(options);
}
