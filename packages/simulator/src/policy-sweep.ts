/**
 * A sweep of a policy's options, one at a time around its defaults, on several scenarios
 * and seeds (issue 11: the `webpp` policy's hedge quantile, hedge budget, estimate decay and
 * refresh budget). Each variant is judged by the two sides of the tradeoff: time relative to
 * the paper's optimal (every replica at once, the first complete body wins) and extra
 * requests (hedges, refreshes, probes, resumes: every HTTP request beyond one per request).
 */
import { parseScenario, type Scenario, type WorkloadSpec } from '@webpp/netem/model';
import { round } from './compare.js';
import { optimalPolicy } from './policies/engine-policies.js';
import type { Policy } from './policy.js';
import { simulate, type SimulationResult } from './simulation.js';

export interface PolicySweepOptions {
  scenarios: unknown[];
  /** The policy with these options over its defaults. */
  policy: (options: Record<string, number>) => Policy;
  /** The defaults of the swept options (each variant changes one of them). */
  defaults: Readonly<Record<string, number>>;
  /** Values to try, per option. */
  values: Readonly<Record<string, readonly number[]>>;
  /** Each variant runs once per seed and scenario. */
  seeds: readonly (string | number)[];
  workload?: WorkloadSpec;
  serviceMs?: number;
  /** Called before each variant (the sweep is synchronous), for progress reports. */
  onVariant?: (progress: { parameter: string; value: number | null; index: number; count: number }) => void;
}

/** One variant on one scenario (averaged over seeds), or over all scenarios (`scenario: 'all'`). */
export interface PolicySweepRow {
  scenario: string;
  /** The option varied, or "default". */
  parameter: string;
  value: number | null;
  is_default: boolean;
  /** Mean response time ÷ optimal-complete's, mean over seeds (and, for 'all', over scenarios). */
  relative_to_optimal: number;
  /** p95 ÷ optimal-complete's p95, likewise. */
  relative_p95_to_optimal: number;
  /** For 'all': the worst scenario's relative_to_optimal. */
  worst_relative_to_optimal: number;
  worst_scenario: string;
  /** Every HTTP request beyond one per request ÷ requests, over all runs of the row (%). */
  extra_requests_pct: number;
  /** HTTP requests by purpose over all runs of the row (request, hedge, refresh, probe, resume…). */
  exchanges: Record<string, number>;
  failed_requests: number;
  requests: number;
}

export interface PolicySweepResult {
  rows: PolicySweepRow[];
  runs: number;
  elapsedMs: number;
}

const mean = (values: readonly number[]): number => values.reduce((sum, value) => sum + value, 0) / values.length;

export function runPolicySweep(options: PolicySweepOptions): PolicySweepResult {
  const startedMs = performance.now();
  const scenarios = options.scenarios.map((input) => parseScenario(input));
  let runs = 0;
  const run = (scenario: Scenario, seed: string | number, policy: Policy): SimulationResult => {
    runs++;
    return simulate({ scenario, policy, seed, ...(options.workload ? { workload: options.workload } : {}), ...(options.serviceMs !== undefined ? { serviceMs: options.serviceMs } : {}) });
  };
  const optimal = new Map<string, SimulationResult>();
  for (const scenario of scenarios) for (const seed of options.seeds) optimal.set(`${scenario.name}|${seed}`, run(scenario, seed, optimalPolicy()));

  const variants: { parameter: string; value: number | null; options: Record<string, number> }[] = [{ parameter: 'default', value: null, options: { ...options.defaults } }];
  for (const [parameter, values] of Object.entries(options.values)) {
    for (const value of values) {
      if (value === options.defaults[parameter]) continue;
      variants.push({ parameter, value, options: { ...options.defaults, [parameter]: value } });
    }
  }

  const rows: PolicySweepRow[] = [];
  for (const [index, variant] of variants.entries()) {
    options.onVariant?.({ parameter: variant.parameter, value: variant.value, index, count: variants.length });
    const perScenario: PolicySweepRow[] = [];
    for (const scenario of scenarios) {
      const results = options.seeds.map((seed) => ({ result: run(scenario, seed, options.policy(variant.options)), optimal: optimal.get(`${scenario.name}|${seed}`)! }));
      perScenario.push(summaryRow(scenario.name, variant, results));
    }
    rows.push(...perScenario);
    const worst = [...perScenario].sort((a, b) => b.relative_to_optimal - a.relative_to_optimal)[0]!;
    const exchanges = sumCounts(perScenario.map((row) => row.exchanges));
    const requests = perScenario.reduce((sum, row) => sum + row.requests, 0);
    rows.push({
      scenario: 'all',
      parameter: variant.parameter,
      value: variant.value,
      is_default: variant.parameter === 'default',
      relative_to_optimal: round(mean(perScenario.map((row) => row.relative_to_optimal)), 3),
      relative_p95_to_optimal: round(mean(perScenario.map((row) => row.relative_p95_to_optimal)), 3),
      worst_relative_to_optimal: worst.relative_to_optimal,
      worst_scenario: worst.scenario,
      extra_requests_pct: round(extraPct(exchanges, requests), 2),
      exchanges,
      failed_requests: perScenario.reduce((sum, row) => sum + row.failed_requests, 0),
      requests,
    });
  }
  return { rows, runs, elapsedMs: performance.now() - startedMs };
}

function sumCounts(counts: readonly Record<string, number>[]): Record<string, number> {
  const total: Record<string, number> = {};
  for (const count of counts) for (const [key, value] of Object.entries(count)) total[key] = (total[key] ?? 0) + value;
  return total;
}

/** (HTTP requests − requests) ÷ requests, in %. */
const extraPct = (exchanges: Record<string, number>, requests: number): number =>
  requests === 0 ? 0 : ((Object.values(exchanges).reduce((sum, count) => sum + count, 0) - requests) / requests) * 100;

function summaryRow(
  scenario: string,
  variant: { parameter: string; value: number | null },
  results: readonly { result: SimulationResult; optimal: SimulationResult }[],
): PolicySweepRow {
  const exchanges = sumCounts(results.map(({ result }) => Object.fromEntries(Object.entries(result.exchanges).filter(([key]) => key !== 'total'))));
  const requests = results.reduce((sum, { result }) => sum + result.requests, 0);
  const ratio = mean(results.map(({ result, optimal }) => result.responseTime.meanMs / optimal.responseTime.meanMs));
  return {
    scenario,
    parameter: variant.parameter,
    value: variant.value,
    is_default: variant.parameter === 'default',
    relative_to_optimal: round(ratio, 3),
    relative_p95_to_optimal: round(mean(results.map(({ result, optimal }) => result.responseTime.p95Ms / optimal.responseTime.p95Ms)), 3),
    worst_relative_to_optimal: round(ratio, 3),
    worst_scenario: scenario,
    extra_requests_pct: round(extraPct(exchanges, requests), 2),
    exchanges,
    failed_requests: results.reduce((sum, { result }) => sum + result.failed, 0),
    requests,
  };
}
