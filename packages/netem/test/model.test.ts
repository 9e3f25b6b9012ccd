import { describe, expect, it } from 'vitest';
import {
  BUILTIN_SCENARIOS,
  ServerTimeline,
  UNIFORMS_PER_PLAN,
  createRandom,
  listScenarioFiles,
  loadScenario,
  parseScenario,
  planRequest,
  resolveWorkload,
  responseTiming,
  sampleDuration,
  scaleScenarioTime,
  type DistributionSpec,
  type Scenario,
} from '../src/index.js';

function draws(count: number, seed: number | string): number[] {
  const random = createRandom(seed);
  return Array.from({ length: count }, () => random());
}

function mean(values: number[]): number {
  return values.reduce((sum, value) => sum + value, 0) / values.length;
}

function stdDev(values: number[]): number {
  const m = mean(values);
  return Math.sqrt(values.reduce((sum, value) => sum + (value - m) ** 2, 0) / values.length);
}

describe('seeded random source', () => {
  it('repeats its sequence for the same seed and differs for another', () => {
    expect(draws(100, 42)).toEqual(draws(100, 42));
    expect(draws(100, 42)).not.toEqual(draws(100, 43));
    expect(draws(100, 'A')).not.toEqual(draws(100, 'B'));
  });

  it('is uniform on [0, 1)', () => {
    const values = draws(20_000, 1);
    expect(Math.min(...values)).toBeGreaterThanOrEqual(0);
    expect(Math.max(...values)).toBeLessThan(1);
    expect(mean(values)).toBeCloseTo(0.5, 1);
    const lowTenth = values.filter((value) => value < 0.1).length / values.length;
    expect(lowTenth).toBeGreaterThan(0.09);
    expect(lowTenth).toBeLessThan(0.11);
  });
});

describe('distributions', () => {
  const cases: DistributionSpec[] = [
    { distribution: 'normal', meanMs: 100, stdDevMs: 20 },
    { distribution: 'lognormal', meanMs: 100, stdDevMs: 50 },
    { distribution: 'uniform', meanMs: 100, stdDevMs: 20 },
    { distribution: 'exponential', meanMs: 100 },
    { distribution: 'pareto', meanMs: 100, shape: 3.5 },
  ];
  for (const spec of cases) {
    it(`${spec.distribution} has the configured mean${spec.stdDevMs ? ' and standard deviation' : ''}`, () => {
      const random = createRandom('dist', spec.distribution);
      const values = Array.from({ length: 40_000 }, () => sampleDuration(spec, random));
      expect(Math.abs(mean(values) - spec.meanMs) / spec.meanMs).toBeLessThan(0.03);
      if (spec.stdDevMs) expect(Math.abs(stdDev(values) - spec.stdDevMs) / spec.stdDevMs).toBeLessThan(0.08);
      expect(Math.min(...values)).toBeGreaterThanOrEqual(0);
    });
  }

  it('clamps to [minMs, maxMs] and treats a number as a constant', () => {
    const random = createRandom(5);
    const spec: DistributionSpec = { distribution: 'normal', meanMs: 50, stdDevMs: 100, minMs: 10, maxMs: 90 };
    const values = Array.from({ length: 1000 }, () => sampleDuration(spec, random));
    expect(Math.min(...values)).toBe(10);
    expect(Math.max(...values)).toBe(90);
    expect(sampleDuration(42, random)).toBe(42);
  });

  it('consumes the same number of uniforms per plan whatever the link, so streams stay aligned', () => {
    const links = [
      { delayMs: 5 },
      { delayMs: { distribution: 'pareto' as const, meanMs: 80 }, stall: { probability: 0.5, durationMs: 100 } },
      { delayMs: { distribution: 'normal' as const, meanMs: 80, stdDevMs: 3 }, bandwidthBytesPerSec: 1000 },
    ];
    for (const link of links) {
      const planned = createRandom('align');
      planRequest(link, planned);
      const reference = createRandom('align');
      for (let i = 0; i < UNIFORMS_PER_PLAN; i++) reference();
      expect(planned()).toBe(reference());
    }
  });
});

describe('request plans and timing', () => {
  it('turns a plan into first-byte and completion times (delay, service, stall, bandwidth)', () => {
    const plan = { delayMs: 100, stallMs: 0, stallPhase: 'first-byte' as const, stallAfterFraction: 0.5, bandwidthBytesPerSec: 50_000 };
    expect(responseTiming(plan, 100_000, 2)).toEqual({ firstByteMs: 102, completeMs: 2102 });
    expect(responseTiming({ ...plan, stallMs: 1000 }, 0)).toEqual({ firstByteMs: 1100, completeMs: 1100 });
    expect(responseTiming({ ...plan, stallMs: 1000, stallPhase: 'body' }, 50_000)).toEqual({ firstByteMs: 100, completeMs: 2100 });
    expect(responseTiming({ ...plan, bandwidthBytesPerSec: null }, 10_000_000).completeMs).toBe(100);
  });

  it('stalls about as often as configured', () => {
    const random = createRandom('stalls');
    const link = { delayMs: 10, stall: { probability: 0.1, durationMs: 500 } };
    const stalls = Array.from({ length: 10_000 }, () => planRequest(link, random)).filter((plan) => plan.stallMs > 0).length;
    expect(stalls).toBeGreaterThan(900);
    expect(stalls).toBeLessThan(1100);
  });
});

describe('schedules', () => {
  const server = new ServerTimeline('A', {
    link: { delayMs: 20, bandwidthBytesPerSec: 1000 },
    schedule: [
      { atMs: 100, link: { delayMs: 200 } },
      { atMs: 300, transition: 'linear', link: { delayMs: 400, bandwidthBytesPerSec: 3000 } },
    ],
    outages: [
      { fromMs: 500, toMs: 600, mode: 'hang' },
      { fromMs: 50, toMs: 60 },
    ],
  });

  it('steps at "step" entries and ramps linearly into "linear" ones', () => {
    expect(server.linkAt(0).delayMs).toBe(20);
    expect(server.linkAt(99).delayMs).toBe(20);
    expect(server.linkAt(100).delayMs).toBe(200);
    expect(server.linkAt(200)).toMatchObject({ delayMs: 300, bandwidthBytesPerSec: 2000 });
    expect(server.linkAt(300)).toMatchObject({ delayMs: 400, bandwidthBytesPerSec: 3000 });
    expect(server.linkAt(10_000).delayMs).toBe(400);
  });

  it('ramps distribution parameters of the same kind', () => {
    const ramp = new ServerTimeline('B', {
      link: { delayMs: { distribution: 'lognormal', meanMs: 40, stdDevMs: 10 } },
      schedule: [{ atMs: 100, transition: 'linear', link: { delayMs: { distribution: 'lognormal', meanMs: 140, stdDevMs: 30 } } }],
    });
    expect(ramp.linkAt(25).delayMs).toEqual({ distribution: 'lognormal', meanMs: 65, stdDevMs: 15 });
  });

  it('finds the outage window covering a time, sorted, end exclusive', () => {
    expect(server.outageAt(49)).toBeUndefined();
    expect(server.outageAt(50)).toMatchObject({ fromMs: 50 });
    expect(server.outageAt(60)).toBeUndefined();
    expect(server.outageAt(550)).toMatchObject({ mode: 'hang' });
    expect(server.outageStartingIn(60, 1000)).toMatchObject({ fromMs: 500 });
    expect(server.outageStartingIn(60, 499)).toBeUndefined();
  });
});

describe('scenario files', () => {
  const valid: Scenario = {
    formatVersion: 1,
    name: 'x',
    durationMs: 1000,
    servers: { A: { link: { delayMs: 5 } } },
  };

  it('accepts a minimal scenario and fills the paper workload in', () => {
    const scenario = parseScenario(valid);
    expect(resolveWorkload(scenario)).toEqual({
      clients: 3,
      fileSizesBytes: [512, 5120, 51200, 512000],
      requestsPerClient: Number.POSITIVE_INFINITY,
      durationMs: 1000,
      thinkTimeMs: 0,
      requestTimeoutMs: 30_000,
      failurePauseMs: 1000,
    });
  });

  it.each([
    [{ ...valid, formatVersion: 2 }, '$.formatVersion'],
    [{ ...valid, servers: {} }, '$.servers'],
    [{ ...valid, servers: { A: { link: { delay: 5 } } } }, '$.servers.A.link.delay: unknown field'],
    [{ ...valid, servers: { A: { link: { delayMs: -1 } } } }, '$.servers.A.link.delayMs'],
    [{ ...valid, servers: { A: { link: { delayMs: { distribution: 'gamma', meanMs: 1 } } } } }, '$.servers.A.link.delayMs.distribution'],
    [{ ...valid, servers: { A: { link: { delayMs: 1, stall: { probability: 2, durationMs: 1 } } } } }, 'stall.probability'],
    [{ ...valid, servers: { A: { link: { delayMs: 1 }, outages: [{ fromMs: 0, toMs: 10 }, { fromMs: 5, toMs: 20 }] } } }, 'must not overlap'],
    [{ ...valid, servers: { A: { link: { delayMs: 1 }, outages: [{ fromMs: 0, toMs: 10, mode: 'explode' }] } } }, 'mode'],
    [{ ...valid, servers: { A: { link: { delayMs: 1 }, schedule: [{ atMs: 10, link: {} }, { atMs: 5, link: {} }] } } }, 'schedule[1].atMs'],
    [{ ...valid, servers: { 'a b': { link: { delayMs: 1 } } } }, 'server names'],
    [{ ...valid, workload: { clients: 0 } }, '$.workload.clients'],
  ])('rejects bad input with WEBPP_ERR_NETEM_SCENARIO naming the path (%#)', (input, message) => {
    expect(() => parseScenario(input)).toThrow(expect.objectContaining({ code: 'WEBPP_ERR_NETEM_SCENARIO', message: expect.stringContaining(message) }));
  });

  it('names every problem at once, and judges a duration given as an object as a distribution', () => {
    const bad = { ...valid, durationMs: 0, servers: { A: { link: { delayMs: { distribution: 'normal', meanMs: -1 } } } }, workload: { clients: 1.5 } };
    let message = '';
    try {
      parseScenario(bad);
    } catch (error) {
      message = (error as Error).message;
    }
    expect(message.split('; ').sort()).toEqual(['$.durationMs: must be > 0', '$.servers.A.link.delayMs.meanMs: must be >= 0', '$.workload.clients: must be integer']);
  });

  it('rejects a distribution whose clamps are crossed and an outage that ends before it starts', () => {
    expect(() => parseScenario({ ...valid, servers: { A: { link: { delayMs: { distribution: 'normal', meanMs: 5, minMs: 9, maxMs: 2 } } } } })).toThrow('$.servers.A.link.delayMs: minMs must be ≤ maxMs');
    expect(() => parseScenario({ ...valid, servers: { A: { link: { delayMs: 1 }, outages: [{ fromMs: 10, toMs: 10 }] } } })).toThrow('$.servers.A.outages[0].toMs: must be > fromMs');
  });

  it('ships peak, evening, outage and degradation, all valid', () => {
    expect(listScenarioFiles()).toEqual(expect.arrayContaining([...BUILTIN_SCENARIOS]));
    for (const name of BUILTIN_SCENARIOS) {
      const scenario = loadScenario(name);
      expect(scenario.name).toBe(name);
      expect(Object.keys(scenario.servers)).toEqual(['A', 'B', 'C']);
    }
    expect(() => loadScenario('nope')).toThrow(/no scenario "nope"/);
  });

  it('the outage scenario takes its best server down and brings it back', () => {
    const scenario = loadScenario('outage');
    const a = new ServerTimeline('A', scenario.servers['A']!);
    expect(a.outageAt(0)).toBeUndefined();
    expect(a.outageAt(90_000)).toBeDefined();
    expect(a.outageAt(scenario.durationMs - 1)).toBeUndefined();
  });

  it('scales a timeline without touching delays', () => {
    const scaled = scaleScenarioTime(loadScenario('outage'), 0.1);
    expect(scaled.durationMs).toBe(30_000);
    expect(scaled.servers['A']!.outages![0]).toMatchObject({ fromMs: 6000, toMs: 12_000 });
    expect(scaled.servers['A']!.link).toEqual(loadScenario('outage').servers['A']!.link);
  });
});
