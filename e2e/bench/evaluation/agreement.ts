/**
 * The simulator on the same compressed scenario, the same workload and the same policies as
 * the browser run, and the check that both agree within a stated tolerance (issue 7).
 *
 * The simulator runs several seeds: one browser run is one realisation of the scenario's
 * randomness, so the simulator's spread over seeds shows how far two honest runs can differ.
 */
import { simulate } from '@webpp/simulator';
import type { SimulationResult } from '@webpp/simulator';
import type { Scenario, WorkloadSpec } from '@webpp/netem';
import type { BenchPolicy } from './policies.js';

/** Tolerances, fixed before looking at the data. */
const AGREEMENT_TOLERANCE = {
  /** relative_to_optimal agrees within ± max(absolute, relative × simulated value). */
  ratioAbsolute: 0.1,
  ratioRelative: 0.1,
  /** extra_requests_pct agrees within ± max(absolute points, relative × simulated value). */
  extraPointsAbsolute: 1.5,
  extraRelative: 0.25,
} as const;

export interface SimulatedPolicy {
  policy: string;
  meanMs: number;
  medianMs: number;
  p95Ms: number;
  relativeToOptimal: number;
  relativeMin: number;
  relativeMax: number;
  extraRequestsPct: number;
  failedRequests: number;
  requests: number;
  bestServerShare: number;
  /** Per seed. */
  seeds: { seed: string | number; relativeToOptimal: number; meanMs: number; extraRequestsPct: number; failed: number }[];
}

export interface SimulatorOptions {
  scenario: Scenario;
  policies: readonly BenchPolicy[];
  workload: WorkloadSpec;
  serviceMs: number;
  seeds: readonly (string | number)[];
}

const mean = (values: readonly number[]): number => values.reduce((sum, value) => sum + value, 0) / values.length;

export function simulateScenario(options: SimulatorOptions): SimulatedPolicy[] {
  const bySeed = options.seeds.map((seed) => {
    const results = new Map<string, SimulationResult>();
    for (const policy of options.policies) {
      results.set(policy.name, simulate({ scenario: options.scenario, policy: policy.simulated(), seed, workload: options.workload, serviceMs: options.serviceMs }));
    }
    return { seed, results };
  });
  return options.policies.map((policy) => {
    const seeds = bySeed.map(({ seed, results }) => {
      const result = results.get(policy.name)!;
      const optimal = results.get('optimal')!;
      return {
        seed,
        relativeToOptimal: result.responseTime.meanMs / optimal.responseTime.meanMs,
        meanMs: result.responseTime.meanMs,
        medianMs: result.responseTime.medianMs,
        p95Ms: result.responseTime.p95Ms,
        extraRequestsPct: result.extraRequestsPct,
        failed: result.failed,
        requests: result.requests,
        bestServerShare: result.bestServerShare,
      };
    });
    const ratios = seeds.map((seed) => seed.relativeToOptimal);
    return {
      policy: policy.name,
      meanMs: mean(seeds.map((seed) => seed.meanMs)),
      medianMs: mean(seeds.map((seed) => seed.medianMs)),
      p95Ms: mean(seeds.map((seed) => seed.p95Ms)),
      relativeToOptimal: mean(ratios),
      relativeMin: Math.min(...ratios),
      relativeMax: Math.max(...ratios),
      extraRequestsPct: mean(seeds.map((seed) => seed.extraRequestsPct)),
      failedRequests: mean(seeds.map((seed) => seed.failed)),
      requests: mean(seeds.map((seed) => seed.requests)),
      bestServerShare: mean(seeds.map((seed) => seed.bestServerShare)),
      seeds: seeds.map(({ seed, relativeToOptimal, meanMs, extraRequestsPct, failed }) => ({ seed, relativeToOptimal, meanMs, extraRequestsPct, failed })),
    };
  });
}

export interface Agreement {
  ratio: boolean;
  /** The browser's ratio lies within the simulator's range over seeds (a second, descriptive check). */
  ratioWithinSeedRange: boolean;
  extra: boolean;
  /** Both failed none, or both failed some. */
  failed: boolean;
  ratioToleranceAbs: number;
  extraTolerancePoints: number;
}

export function agreement(browser: { relativeToOptimal: number; extraRequestsPct: number; failed: number }, simulated: SimulatedPolicy): Agreement {
  const ratioToleranceAbs = Math.max(AGREEMENT_TOLERANCE.ratioAbsolute, AGREEMENT_TOLERANCE.ratioRelative * simulated.relativeToOptimal);
  const extraTolerancePoints = Math.max(AGREEMENT_TOLERANCE.extraPointsAbsolute, AGREEMENT_TOLERANCE.extraRelative * simulated.extraRequestsPct);
  return {
    ratio: Math.abs(browser.relativeToOptimal - simulated.relativeToOptimal) <= ratioToleranceAbs,
    ratioWithinSeedRange: browser.relativeToOptimal >= simulated.relativeMin && browser.relativeToOptimal <= simulated.relativeMax,
    extra: Math.abs(browser.extraRequestsPct - simulated.extraRequestsPct) <= extraTolerancePoints,
    failed: browser.failed === 0 ? simulated.failedRequests === 0 : simulated.failedRequests > 0,
    ratioToleranceAbs,
    extraTolerancePoints,
  };
}
