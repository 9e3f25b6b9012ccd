import { describe, expect, it } from 'vitest';
import { AGREEMENT_TOLERANCE, scenarioTolerance } from './agreement.js';
import { goalCells, goalsMarkdown } from './goals.js';
import type { ResultRow } from './rows.js';
import { withGains } from './rows.js';
import { aggregateRuns, median } from './runs.js';

/** A row with the figures these tests look at; the rest as a bench run would leave them. */
function row(scenario: string, policy: string, figures: Partial<ResultRow>): ResultRow {
  return {
    scenario,
    policy,
    mean_ms: 100,
    median_ms: 90,
    p95_ms: 300,
    relative_to_optimal: 1,
    relative_p95_to_optimal: 1,
    extra_requests_pct: 0,
    failed_requests: 0,
    requests: 100,
    sim_relative_to_optimal: 1,
    sim_relative_to_optimal_range: [0.95, 1.05],
    sim_relative_p95_to_optimal: 1,
    sim_extra_requests_pct: 0,
    sim_failed_requests: 0,
    missing_decisions: 0,
    best_server_share: null,
    runs: 1,
    better_than_mean_single: Number.NaN,
    ...figures,
  } as ResultRow;
}

describe('several runs folded into one table', () => {
  it('reports each figure as the median over the runs with its min–max range', () => {
    const runs = [
      [row('peak', 'webpp', { relative_to_optimal: 1.2, p95_ms: 500, extra_requests_pct: 4 })],
      [row('peak', 'webpp', { relative_to_optimal: 1.05, p95_ms: 700, extra_requests_pct: 6 })],
      [row('peak', 'webpp', { relative_to_optimal: 1.1, p95_ms: 400, extra_requests_pct: 5 })],
    ];
    const [folded] = aggregateRuns(runs);
    expect(folded).toMatchObject({ runs: 3, relative_to_optimal: 1.1, p95_ms: 500, extra_requests_pct: 5 });
    expect(folded!.range).toMatchObject({ relative_to_optimal: [1.05, 1.2], p95_ms: [400, 700], extra_requests_pct: [4, 6] });
    expect(median([3, 1, 2, 10])).toBe(2.5);
  });

  it('judges the agreement again on the medians, with the spread of the median simulated ratios', () => {
    const scenario = (browser: number): ResultRow[] => [
      row('evening', 'single-A', { relative_to_optimal: 1.1, sim_relative_to_optimal: 1.1 }),
      row('evening', 'single-C', { relative_to_optimal: 1.3, sim_relative_to_optimal: 1.3 }),
      row('evening', 'webpp', { relative_to_optimal: browser, sim_relative_to_optimal: 1.1 }),
      row('evening', 'optimal-complete', { relative_to_optimal: 1, sim_relative_to_optimal: 1 }),
    ];
    const folded = aggregateRuns([scenario(1.2), scenario(1.13), scenario(1.14)]);
    const webpp = folded.find((candidate) => candidate.policy === 'webpp')!;
    // The spread of the simulated policies is 0.2 (the baseline left out): the tolerance is 0.2 ÷ 5 = 0.04, not 10%.
    expect(webpp.scenario_spread).toBe(0.2);
    expect(webpp.agreement_tolerance).toBe(0.04);
    expect(webpp.relative_to_optimal).toBe(1.14);
    expect(webpp.agrees_relative_to_optimal).toBe(true);
    const off = aggregateRuns([scenario(1.2), scenario(1.2), scenario(1.13)]).find((candidate) => candidate.policy === 'webpp')!;
    expect(off.agrees_relative_to_optimal).toBe(false);
  });
});

describe('agreement tolerance per scenario', () => {
  const simulated = (ratios: Record<string, number>) =>
    Object.entries(ratios).map(([policy, ratio]) => ({ policy, relativeToOptimal: ratio, relativeMin: ratio - 0.01, relativeMax: ratio + 0.03 }));

  it('is at most 10% of the simulated ratio, where the policies spread widely', () => {
    const tolerance = scenarioTolerance(simulated({ 'single-A': 1.2, 'single-C': 2.4, webpp: 1.1, optimal: 1.3, 'optimal-complete': 1 }));
    expect(tolerance.spread).toBeCloseTo(1.3, 9);
    expect(tolerance.ratioToleranceAbs(1.1)).toBeCloseTo(0.11, 9);
    expect(tolerance.seedSpread).toBeCloseTo(0.04, 9);
  });

  it('is a fifth of the spread where the policies are close, and never below the floor', () => {
    expect(scenarioTolerance(simulated({ a: 1.0, b: 1.15 })).ratioToleranceAbs(1.05)).toBeCloseTo(0.03, 9);
    expect(scenarioTolerance(simulated({ a: 1.0, b: 1.01 })).ratioToleranceAbs(1.0)).toBe(AGREEMENT_TOLERANCE.ratioFloor);
  });
});

describe('goals of issue 11', () => {
  it('counts a goal as met only when every run met it', () => {
    const runs = [1.05, 1.08, 1.12].map((ratio) => [
      row('peak', 'single-A', { mean_ms: 300 }),
      row('peak', 'single-B', { mean_ms: 200 }),
      row('peak', 'webpp', { mean_ms: 120, relative_to_optimal: ratio, relative_p95_to_optimal: 1.2, extra_requests_pct: 3 }),
    ]);
    const folded = aggregateRuns(runs.map(withGains));
    const cells = goalCells(folded, 'webpp')!;
    expect(cells['mean']).toMatchObject({ met: false, text: 'worst peak 1.080 (1.050–1.120)' });
    expect(cells['p95']!.met).toBe(true);
    expect(cells['extra']!.met).toBe(true);
    expect(cells['failed']!.met).toBe(true);
    // 1 − 120 ÷ mean(300, 200) = 52%.
    expect(cells['peak']).toMatchObject({ met: true, text: '0.520 (0.520–0.520) better' });
    expect(goalsMarkdown(folded).join('\n')).toContain('| mean ≤ 1.10× optimal-complete, every scenario | **missed**: worst peak 1.080 (1.050–1.120) |');
  });
});
