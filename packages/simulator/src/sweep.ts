/**
 * Parameter sweeps of the extended Refresh algorithm (the paper's Section 4.2 sensitivity
 * study, Figures 5 and 6): vary r, TTL, S, T (and F, and the number of clients sharing a
 * table) one at a time around a base configuration, or over a full grid, and measure
 * response time relative to optimal, extra requests, failures and prediction error.
 */
import { FAST_PRESET, PAPER_DEFAULTS, resolveSelectionConfig, type SelectionConfig } from '@webpp/core';
import { parseScenario, resolveWorkload, type Scenario, type WorkloadSpec } from '@webpp/netem/model';
import { round } from './compare.js';
import { optimalPolicy } from './policies/engine-policies.js';
import { webppPolicy } from './policies/engine-policies.js';
import type { Policy } from './policy.js';
import { simulate, type SimulationResult } from './simulation.js';

/** The swept SelectionConfig fields. */
export const SWEPT_PARAMETERS = [
  'ewmaWeight',
  'ttlMs',
  'selectPercentile',
  'timeoutPercentile',
  'timeoutFloorMs',
  'timeoutMeanMultiple',
  'probeIntervalMs',
] as const;
export type SweptParameter = (typeof SWEPT_PARAMETERS)[number];

export type SweepValues = Partial<Record<SweptParameter, number[]>> & {
  /** Number of clients sharing one latency table (and, separately, each with its own). */
  clients?: number[];
};

const SECOND_MS = 1000;
const MINUTE_MS = 60 * SECOND_MS;

export const DEFAULT_SWEEP_VALUES: Required<SweepValues> = {
  ewmaWeight: [0.05, 0.1, 0.25, 0.5, 0.75, 0.95, 1],
  ttlMs: [1 * SECOND_MS, 5 * SECOND_MS, 20 * SECOND_MS, 1 * MINUTE_MS, 5 * MINUTE_MS, 41 * MINUTE_MS],
  selectPercentile: [5, 25, 55, 75, 95],
  timeoutPercentile: [90, 99, 99.9, 99.99],
  timeoutFloorMs: [100, 250, 500, 1 * SECOND_MS, 2 * SECOND_MS],
  timeoutMeanMultiple: [0, 1.5, 3, 5],
  probeIntervalMs: [500, 2 * SECOND_MS, 10 * SECOND_MS, 1 * MINUTE_MS, 28.8 * 60 * MINUTE_MS],
  clients: [1, 3, 10],
};

export interface SweepBase {
  name: string;
  config: Readonly<SelectionConfig>;
}

export const DEFAULT_SWEEP_BASES: SweepBase[] = [
  { name: 'fast', config: FAST_PRESET },
  { name: 'paper', config: PAPER_DEFAULTS },
];

export interface SweepOptions {
  /** Parsed Scenarios, or raw scenario JSON to validate. */
  scenarios: unknown[];
  bases?: SweepBase[];
  values?: SweepValues;
  /** Full factorial over r × TTL × S × T instead of one at a time (slow). Default false. */
  grid?: boolean;
  /** Every variant runs once per seed and rows average over them. Default: the scenario's own seed. */
  seeds?: Array<string | number>;
  workload?: WorkloadSpec;
  serviceMs?: number;
  /** Called before each variant runs, for progress reports (the sweep is synchronous). */
  onVariant?: (progress: SweepProgress) => void;
}

/** Where a sweep is: the scenario and the variant about to run. */
export interface SweepProgress {
  scenario: string;
  scenarioIndex: number;
  scenarioCount: number;
  base: string;
  parameter: SweepRow['parameter'];
  value: number | null;
  variantIndex: number;
  variantCount: number;
}

export interface SweepRow {
  scenario: string;
  base: string;
  /** The parameter varied in this row ("baseline" for the base itself, "grid" in grid mode). */
  parameter: SweptParameter | 'clients' | 'baseline' | 'grid';
  value: number | null;
  r: number;
  ttl_ms: number;
  f_ms: number;
  s: number;
  t: number;
  timeout_floor_ms: number;
  timeout_mean_multiple: number;
  clients: number;
  shared_table: boolean;
  mean_ms: number;
  median_ms: number;
  p95_ms: number;
  relative_to_optimal: number;
  extra_requests_pct: number;
  failed_requests: number;
  requests: number;
  /** Mean |estimate − sample| / sample (paper Figure 5); null without samples. */
  prediction_error: number | null;
  /** Runs averaged into this row (one per seed); failed_requests and requests are totals over them. */
  seeds: number;
}

export interface SweepResult {
  rows: SweepRow[];
  /** Optimal's mean response time per scenario (default clients, averaged over seeds). */
  optimalMeanMs: Record<string, number>;
  runs: number;
  requestsSimulated: number;
  elapsedMs: number;
}

interface Variant {
  parameter: SweepRow['parameter'];
  value: number | null;
  config: SelectionConfig;
  clients: number;
  sharedTable: boolean;
}

function withParameter(base: Readonly<SelectionConfig>, parameter: SweptParameter, value: number): SelectionConfig {
  const change: Partial<SelectionConfig> = { [parameter]: value };
  // F may not exceed its cap: raise the cap along with it.
  if (parameter === 'probeIntervalMs') change.maxProbeIntervalMs = Math.max(base.maxProbeIntervalMs, value);
  // The timeout bounds must stay ordered: floor ≤ initial ≤ ceiling.
  if (parameter === 'timeoutFloorMs') {
    change.timeoutCeilingMs = Math.max(base.timeoutCeilingMs, value);
    change.initialTimeoutMs = Math.max(base.initialTimeoutMs, value);
  }
  return resolveSelectionConfig(change, base);
}

function variantsOf(base: SweepBase, values: Required<SweepValues>, grid: boolean, defaultClients: number): Variant[] {
  const variants: Variant[] = [{ parameter: 'baseline', value: null, config: { ...base.config }, clients: defaultClients, sharedTable: true }];
  if (grid) {
    for (const r of values.ewmaWeight) {
      for (const ttl of values.ttlMs) {
        for (const s of values.selectPercentile) {
          for (const t of values.timeoutPercentile) {
            const config = resolveSelectionConfig({ ewmaWeight: r, ttlMs: ttl, selectPercentile: s, timeoutPercentile: t }, base.config);
            variants.push({ parameter: 'grid', value: null, config, clients: defaultClients, sharedTable: true });
          }
        }
      }
    }
    return variants;
  }
  for (const parameter of SWEPT_PARAMETERS) {
    for (const value of values[parameter]) {
      variants.push({ parameter, value, config: withParameter(base.config, parameter, value), clients: defaultClients, sharedTable: true });
    }
  }
  for (const clients of values.clients) {
    for (const sharedTable of [true, false]) {
      variants.push({ parameter: 'clients', value: clients, config: { ...base.config }, clients, sharedTable });
    }
  }
  return variants;
}

export function runSweep(options: SweepOptions): SweepResult {
  const startedMs = performance.now();
  const values = { ...DEFAULT_SWEEP_VALUES, ...options.values } as Required<SweepValues>;
  const bases = options.bases ?? DEFAULT_SWEEP_BASES;
  const rows: SweepRow[] = [];
  const optimalMeanMs: Record<string, number> = {};
  let runs = 0;
  let requestsSimulated = 0;
  const run = (scenario: Scenario, seed: string | number | undefined, clients: number, policy: Policy): SimulationResult => {
    const result = simulate({
      scenario,
      policy,
      ...(seed !== undefined ? { seed } : {}),
      workload: { ...options.workload, clients },
      ...(options.serviceMs !== undefined ? { serviceMs: options.serviceMs } : {}),
    });
    runs++;
    requestsSimulated += result.exchanges.total;
    return result;
  };
  const seeds: Array<string | number | undefined> = options.seeds && options.seeds.length > 0 ? options.seeds : [undefined];
  const mean = (values: number[]): number => values.reduce((sum, value) => sum + value, 0) / values.length;

  for (const [scenarioIndex, input] of options.scenarios.entries()) {
    const scenario = parseScenario(input);
    const defaultClients = resolveWorkload(scenario, options.workload).clients;
    const optimalCache = new Map<string, number>();
    const optimalMean = (seed: string | number | undefined, clients: number): number => {
      const key = `${String(seed)}|${clients}`;
      let value = optimalCache.get(key);
      if (value === undefined) {
        value = run(scenario, seed, clients, optimalPolicy()).responseTime.meanMs;
        optimalCache.set(key, value);
      }
      return value;
    };
    const variants = bases.flatMap((base) => variantsOf(base, values, options.grid ?? false, defaultClients).map((variant) => ({ base, variant })));
    for (const [variantIndex, { base, variant }] of variants.entries()) {
      options.onVariant?.({
        scenario: scenario.name,
        scenarioIndex,
        scenarioCount: options.scenarios.length,
        base: base.name,
        parameter: variant.parameter,
        value: variant.value,
        variantIndex,
        variantCount: variants.length,
      });
      const policy = webppPolicy({ name: `webpp-${base.name}`, base: variant.config, sharedTable: variant.sharedTable });
      const perSeed = seeds.map((seed) => ({ result: run(scenario, seed, variant.clients, policy), optimal: optimalMean(seed, variant.clients) }));
      const errors = perSeed.map(({ result }) => result.meanPredictionError).filter((value): value is number => value !== null);
      const { config } = variant;
      rows.push({
        scenario: scenario.name,
        base: base.name,
        parameter: variant.parameter,
        value: variant.value,
        r: config.ewmaWeight,
        ttl_ms: config.ttlMs,
        f_ms: config.probeIntervalMs,
        s: config.selectPercentile,
        t: config.timeoutPercentile,
        timeout_floor_ms: config.timeoutFloorMs,
        timeout_mean_multiple: config.timeoutMeanMultiple ?? 0,
        clients: variant.clients,
        shared_table: variant.sharedTable,
        mean_ms: round(mean(perSeed.map(({ result }) => result.responseTime.meanMs))),
        median_ms: round(mean(perSeed.map(({ result }) => result.responseTime.medianMs))),
        p95_ms: round(mean(perSeed.map(({ result }) => result.responseTime.p95Ms))),
        relative_to_optimal: round(mean(perSeed.map(({ result, optimal }) => result.responseTime.meanMs / optimal)), 3),
        extra_requests_pct: round(mean(perSeed.map(({ result }) => result.extraRequestsPct)), 2),
        failed_requests: perSeed.reduce((sum, { result }) => sum + result.failed, 0),
        requests: perSeed.reduce((sum, { result }) => sum + result.requests, 0),
        prediction_error: errors.length === 0 ? null : round(mean(errors), 3),
        seeds: perSeed.length,
      });
    }
    optimalMeanMs[scenario.name] = round(mean(seeds.map((seed) => optimalMean(seed, defaultClients))));
  }
  return { rows, optimalMeanMs, runs, requestsSimulated, elapsedMs: performance.now() - startedMs };
}
