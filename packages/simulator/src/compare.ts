/**
 * All policies on the same scenarios, same seed, same workload: the rows of the results
 * table (issue 7), in the format of docs/benchmarks/results.json.
 */
import { parseScenario, serverNames, type WorkloadSpec } from '@webpp/netem/model';
import { oraclePolicy } from './policies/oracle.js';
import { optimalPolicy, randomPolicy, registryPolicy, roundRobinPolicy, singleServerPolicy } from './policies/engine-policies.js';
import { FAST_PRESET, policyNames } from '@webpp/core';
import { hedgedPolicy, webppFastPolicy, webppPaperPolicy, webppPolicy } from './policies/engine-policies.js';
import type { Policy } from './policy.js';
import { simulate, type SimulationResult } from './simulation.js';

/** The policy set: each single server, random, round-robin, Web++ (webpp, the default; paper and fast), optimal, hedged. */
export function standardPolicies(servers: readonly string[]): Policy[] {
  return [
    ...servers.map((server) => singleServerPolicy(server)),
    randomPolicy(),
    roundRobinPolicy(),
    registryPolicy('webpp'),
    webppPaperPolicy(),
    webppFastPolicy(),
    optimalPolicy(),
    hedgedPolicy(),
  ];
}

export const STANDARD_POLICY_NAMES = ['single-<server>', 'random', 'round-robin', 'webpp', 'webpp-paper', 'webpp-fast', 'optimal', 'hedged'] as const;

/** FAST_PRESET Web++ that also fails over when a body breaks off (a buffering or resuming client). */
export function webppFastMidBodyPolicy(): Policy {
  return webppPolicy({ name: 'webpp-fast-midbody', base: FAST_PRESET, midBodyFailover: true });
}

/** A policy by its report name: single-<server>, random, round-robin, webpp-paper, webpp-fast, webpp-fast-midbody, optimal, hedged, oracle. */
export function policyByName(name: string, servers: readonly string[]): Policy {
  if (name.startsWith('single-')) {
    const server = name.slice('single-'.length);
    if (!servers.includes(server)) throw new RangeError(`policy ${name}: the scenario has no server "${server}" (${servers.join(', ')})`);
    return singleServerPolicy(server);
  }
  const factories: Record<string, () => Policy> = {
    random: randomPolicy,
    'round-robin': roundRobinPolicy,
    'webpp-paper': webppPaperPolicy,
    'webpp-fast': webppFastPolicy,
    'webpp-fast-midbody': webppFastMidBodyPolicy,
    optimal: optimalPolicy,
    hedged: hedgedPolicy,
    oracle: oraclePolicy,
  };
  const factory = factories[name] ?? (policyNames().includes(name) ? () => registryPolicy(name) : undefined);
  if (!factory) throw new RangeError(`unknown policy "${name}" (known: single-<server>, ${Object.keys(factories).join(', ')})`);
  return factory();
}

/**
 * The fields every row of docs/benchmarks/results.json has, whether the simulator computed it
 * (ResultRow below) or the browser measured it (e2e/bench/evaluation/rows.ts extends it).
 */
export interface ResultRowCore {
  scenario: string;
  policy: string;
  mean_ms: number;
  median_ms: number;
  p95_ms: number;
  /** mean / optimal's mean. */
  relative_to_optimal: number;
  /** median / optimal's median (the paper's Figures 12 and 14 plot medians). */
  relative_median_to_optimal: number;
  extra_requests_pct: number;
  failed_requests: number;
  requests: number;
}

/** One row of docs/benchmarks/results.json (simulated), plus a few extra columns. */
export interface ResultRow extends ResultRowCore {
  /** Share of successful requests served by the best replica of the moment. */
  best_server_share: number;
  source: 'simulator';
  seed: string | number;
}

export interface ComparisonOptions {
  /** Scenarios, parsed or as read from JSON (parseScenario validates them). */
  scenarios: unknown[];
  /** Default: standardPolicies(servers of each scenario). */
  policies?: (servers: readonly string[]) => Policy[];
  seed?: string | number;
  workload?: WorkloadSpec;
  serviceMs?: number;
}

export interface ScenarioComparison {
  scenario: string;
  results: SimulationResult[];
  rows: ResultRow[];
}

export function toRows(results: readonly SimulationResult[]): ResultRow[] {
  const optimal = results.find((result) => result.policy === 'optimal');
  return results.map((result) => ({
    scenario: result.scenario,
    policy: result.policy,
    mean_ms: round(result.responseTime.meanMs),
    median_ms: round(result.responseTime.medianMs),
    p95_ms: round(result.responseTime.p95Ms),
    relative_to_optimal: optimal ? round(result.responseTime.meanMs / optimal.responseTime.meanMs, 3) : Number.NaN,
    relative_median_to_optimal: optimal ? round(result.responseTime.medianMs / optimal.responseTime.medianMs, 3) : Number.NaN,
    extra_requests_pct: round(result.extraRequestsPct, 2),
    failed_requests: result.failed,
    requests: result.requests,
    best_server_share: round(result.bestServerShare, 3),
    source: 'simulator',
    seed: result.seed,
  }));
}

export function comparePolicies(options: ComparisonOptions): ScenarioComparison[] {
  return options.scenarios.map((input) => {
    const scenario = parseScenario(input);
    const policies = (options.policies ?? standardPolicies)(serverNames(scenario));
    const results = policies.map((policy) =>
      simulate({
        scenario,
        policy,
        ...(options.seed !== undefined ? { seed: options.seed } : {}),
        ...(options.workload ? { workload: options.workload } : {}),
        ...(options.serviceMs !== undefined ? { serviceMs: options.serviceMs } : {}),
      }),
    );
    return { scenario: scenario.name, results, rows: toRows(results) };
  });
}

/** How a policy compares with the single-server systems (paper Section 6.2 reports these). */
export interface ImprovementOverSingle {
  /** 1 − policy mean / mean of the single servers' means. */
  vsMeanSingle: number;
  /** Average, minimum and maximum over servers of 1 − policy mean / that server's mean. */
  averageOverServers: number;
  minOverServers: number;
  maxOverServers: number;
}

export function improvementOverSingle(results: readonly SimulationResult[], policy: string): ImprovementOverSingle | undefined {
  const target = results.find((result) => result.policy === policy);
  const singles = results.filter((result) => result.policy.startsWith('single-'));
  if (!target || singles.length === 0) return undefined;
  const meanSingle = singles.reduce((sum, result) => sum + result.responseTime.meanMs, 0) / singles.length;
  const perServer = singles.map((single) => 1 - target.responseTime.meanMs / single.responseTime.meanMs);
  return {
    vsMeanSingle: 1 - target.responseTime.meanMs / meanSingle,
    averageOverServers: perServer.reduce((sum, value) => sum + value, 0) / perServer.length,
    minOverServers: Math.min(...perServer),
    maxOverServers: Math.max(...perServer),
  };
}

export function round(value: number, digits = 1): number {
  if (!Number.isFinite(value)) return value;
  const factor = 10 ** digits;
  return Math.round(value * factor) / factor;
}
