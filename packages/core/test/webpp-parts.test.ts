/**
 * The webpp policy's parts on their own: options, the hedge budget, the sketch, the probe
 * backoff, snapshot/restore of stale or corrupt state, and what the dashboard sees.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { WEBPP_DEFAULTS, createWebppPolicy, resolveWebppOptions, type ExchangeSample } from '@webpp/core';
import { probeDelayMs } from '../src/policies/webpp/backoff.js';
import { expectedHedgedMs } from '../src/policies/webpp/expected-time.js';
import { LatencySketch } from '../src/policies/webpp/latency-sketch.js';
import { seededRandom } from './fake-clock.js';

const A = 'http://a.localhost:8081';
const B = 'http://b.localhost:8082';
const C = 'http://c.localhost:8083';
const T0 = 1_700_000_000_000;
const BACKOFF = { probeBackoffBaseMs: 1_000, probeBackoffCapMs: 60_000 };

function served(server: string, ttfbMs: number, nowMs: number, extra: Partial<ExchangeSample> = {}): ExchangeSample {
  return { server, purpose: 'request', outcome: 'served', nowMs, ttfbMs, ...extra };
}

describe('webpp options', () => {
  it('names the option and the rule in the error', () => {
    expect(() => resolveWebppOptions({ hedgeQuantile: 1.5 })).toThrow('WebppOptions.hedgeQuantile must be in (0, 1) (got 1.5)');
    expect(() => resolveWebppOptions({ hedgeBudgetShare: -0.1 })).toThrow(/hedgeBudgetShare/);
    expect(() => resolveWebppOptions({ estimateHalfLifeMs: 0 })).toThrow(/estimateHalfLifeMs must be > 0/);
    expect(() => resolveWebppOptions({ refreshBudgetShare: '0.1' })).toThrow(/refreshBudgetShare/);
    expect(() => resolveWebppOptions({ hedgeQuantle: 0.9 })).toThrow('WebppOptions has no option "hedgeQuantle"');
    expect(() => resolveWebppOptions({ timeoutFloorMs: 9_000 })).toThrow(/timeoutFloorMs must be <= timeoutCeilingMs/);
  });

  it('overlays what is given on the defaults', () => {
    const options = resolveWebppOptions({ hedgeQuantile: 0.9, refreshBudgetShare: 0 });
    expect(options).toEqual({ ...WEBPP_DEFAULTS, hedgeQuantile: 0.9, refreshBudgetShare: 0 });
    expect(createWebppPolicy({ random: Math.random, now: Date.now }).options).toEqual(WEBPP_DEFAULTS);
  });
});

describe('webpp hedge budget', () => {
  it('never admits more hedges than hedgeBudgetShare of the requests planned so far', () => {
    fc.assert(
      fc.property(
        fc.double({ min: 0, max: 0.5, noNaN: true }),
        fc.array(fc.oneof(fc.constant('plan' as const), fc.constant('hedge' as const)), { maxLength: 400 }),
        (share, steps) => {
          const policy = createWebppPolicy({ random: seededRandom(1), now: () => T0 }, { hedgeBudgetShare: share });
          let plans = 0;
          let hedges = 0;
          for (const step of steps) {
            if (step === 'plan') {
              // A small body: no cold-start race (plan.ts, coldRace), which is not a hedge.
              policy.plan({ logicalUrl: '/x', method: 'GET', candidates: [A, B], sizeBytes: 1_000, nowMs: T0 });
              plans++;
            } else if (policy.admitHedge(B, T0)) {
              hedges++;
            }
            expect(hedges).toBeLessThanOrEqual(share * plans + 1e-9);
          }
        },
      ),
    );
  });

  it('admits no hedge with a budget of 0', () => {
    const policy = createWebppPolicy({ random: seededRandom(1), now: () => T0 }, { hedgeBudgetShare: 0 });
    for (let i = 0; i < 1_000; i++) policy.plan({ logicalUrl: '/x', method: 'GET', candidates: [A, B], nowMs: T0 + i });
    expect(policy.admitHedge(B, T0)).toBe(false);
  });
});

describe('latency sketch', () => {
  it('gives quantiles within 2 % of the exact ones', () => {
    const sketch = new LatencySketch();
    const values = Array.from({ length: 1_000 }, (_, i) => 10 + i);
    values.forEach((value) => sketch.add(value, T0, 7_000));
    for (const q of [0.05, 0.5, 0.95, 0.99]) {
      const exact = values[Math.ceil(q * values.length) - 1] as number;
      expect(Math.abs(sketch.quantileMs(q) - exact) / exact).toBeLessThanOrEqual(0.021);
    }
    expect(Math.abs(sketch.meanMs() - 509.5) / 509.5).toBeLessThan(0.02);
  });

  it('halves the weight of the past every half-life, and gives a sample after a gap its share of the time', () => {
    const dense = new LatencySketch();
    for (let i = 0; i < 10; i++) dense.add(100, T0, 1_000);
    dense.add(200, T0 + 100, 1_000); // the ten at 100 weigh 10 · 2^(−0.1) = 9.33, the new one 1
    expect(dense.meanMs() / ((9.33 * 100 + 200) / 10.33)).toBeCloseTo(1, 1); // buckets: within 2 %
    const sparse = new LatencySketch();
    for (let i = 0; i < 10; i++) sparse.add(100, T0, 1_000);
    sparse.add(200, T0 + 1_000, 1_000); // one half-life later: share 1 − 2^(−1) = 1/2, as Finagle's EWMA
    expect(sparse.meanMs() / 150).toBeCloseTo(1, 1);
  });
});

describe('expected time of a hedged request', () => {
  /** The formula of expected-time.ts as a plain double sum over both distributions. */
  function naive(p: { valuesMs: number[]; weights: number[] }, bp: number, d: number, h: { valuesMs: number[]; weights: number[] }, bh: number): number {
    let total = 0;
    p.valuesMs.forEach((x, i) => {
      h.valuesMs.forEach((y, j) => {
        const both = (p.weights[i] as number) * (h.weights[j] as number);
        total += both * (x <= d || x <= d + y ? x + bp : d + y + bh);
      });
    });
    return total;
  }
  const distribution = fc
    .array(fc.tuple(fc.integer({ min: 1, max: 3_000 }), fc.double({ min: 0.01, max: 1, noNaN: true })), { minLength: 1, maxLength: 30 })
    .map((pairs) => {
      const sorted = [...new Map(pairs).entries()].sort((a, b) => a[0] - b[0]);
      const total = sorted.reduce((sum, [, w]) => sum + w, 0);
      return { valuesMs: sorted.map(([v]) => v), weights: sorted.map(([, w]) => w / total) };
    });

  it('equals the double sum of the formula (first head wins, its body follows)', () => {
    fc.assert(
      fc.property(distribution, distribution, fc.integer({ min: 0, max: 3_000 }), fc.integer({ min: 0, max: 2_000 }), fc.integer({ min: 0, max: 2_000 }), (p, h, d, bp, bh) => {
        expect(expectedHedgedMs(p, bp, d, h, bh)).toBeCloseTo(naive(p, bp, d, h, bh), 6);
      }),
    );
  });

  it('a stalling primary hedged just past its fast majority costs little more than its fast majority', () => {
    const primary = { valuesMs: [40, 2_040], weights: [0.98, 0.02] };
    const steady = { valuesMs: [120], weights: [1] };
    expect(expectedHedgedMs(primary, 0, 50, steady, 0)).toBeCloseTo(0.98 * 40 + 0.02 * 170, 6);
    expect(expectedHedgedMs(primary, 0, 2_040, steady, 0)).toBeCloseTo(0.98 * 40 + 0.02 * 2_040, 6); // too late to help
  });
});

describe('probe backoff', () => {
  it('starts at 1–2 × base, doubles, and stays within the cap', () => {
    const random = seededRandom(9);
    for (let trial = 0; trial < 200; trial++) {
      const first = probeDelayMs(0, BACKOFF, random);
      expect(first).toBeGreaterThanOrEqual(1_000);
      expect(first).toBeLessThan(2_000);
      expect(probeDelayMs(3, BACKOFF, random)).toBeGreaterThanOrEqual(8_000);
      const late = probeDelayMs(40, BACKOFF, random);
      expect(late).toBeGreaterThanOrEqual(30_000);
      expect(late).toBeLessThanOrEqual(60_000);
    }
  });
});

describe('webpp snapshot and restore', () => {
  function trained() {
    const policy = createWebppPolicy({ random: seededRandom(2), now: () => T0 + 10_000 });
    for (let i = 0; i < 20; i++) {
      policy.observe(served(A, 40 + i, T0 + i * 100, { bodyBytes: 64_000, bodyMs: 64 }));
      policy.observe(served(B, 90 + i, T0 + i * 100));
    }
    policy.observe({ server: C, purpose: 'request', outcome: 'network-error', nowMs: T0 + 3_000 });
    policy.observe({ server: C, purpose: 'request', outcome: 'network-error', nowMs: T0 + 3_001 });
    return policy;
  }

  it('restores a plain-JSON snapshot into the same plans and views', () => {
    const original = trained();
    const json = JSON.parse(JSON.stringify(original.snapshot()));
    const restored = createWebppPolicy({ random: seededRandom(2), now: () => T0 + 10_000 });
    restored.restore(json);
    const input = { logicalUrl: '/x', method: 'GET', candidates: [C, B, A], sizeBytes: 100_000, nowMs: T0 + 5_000 };
    expect(restored.plan(input)).toEqual(original.plan(input));
    expect(restored.describe(T0 + 5_000)).toEqual(original.describe(T0 + 5_000));
    expect(restored.describe(T0 + 5_000).find((view) => view.server === C)?.state).toBe('failed');
  });

  it('ignores what is not a snapshot and drops malformed rows, never throwing', () => {
    const good = JSON.parse(JSON.stringify(trained().snapshot()));
    const junk: unknown[] = [
      undefined,
      null,
      42,
      'state',
      [],
      { formatVersion: 2, policy: 'webpp', servers: good.servers },
      { formatVersion: 1, policy: 'paper', servers: good.servers },
      { formatVersion: 1, policy: 'webpp', servers: [] },
      { formatVersion: 1, policy: 'webpp', servers: { [A]: { ...good.servers[A], ttfb: { buckets: [[1.5, 1]], atMs: 0 } } } },
      { formatVersion: 1, policy: 'webpp', servers: { [A]: { ...good.servers[A], ttfb: { buckets: [[10, -1]], atMs: 0 } } } },
      { formatVersion: 1, policy: 'webpp', servers: { [A]: { ...good.servers[A], state: 'dead' } } },
      { formatVersion: 1, policy: 'webpp', servers: { [A]: { ...good.servers[A], sampleCount: Number.NaN } } },
      { formatVersion: 1, policy: 'webpp', servers: { [A]: { ...good.servers[A], throughput: null } } },
    ];
    for (const state of junk) {
      const policy = createWebppPolicy({ random: seededRandom(2), now: () => T0 });
      expect(() => policy.restore(state)).not.toThrow();
      expect(policy.describe(T0)).toEqual([]);
      // And it still works: a cold start in the origin's order.
      expect(policy.plan({ logicalUrl: '/x', method: 'GET', candidates: [B, A], nowMs: T0 })[0]?.reason).toBe('cold-start-origin-order');
    }
    const partial = { ...good, servers: { ...good.servers, [B]: { ...good.servers[B], failureStreak: -1 } } };
    const policy = createWebppPolicy({ random: seededRandom(2), now: () => T0 + 10_000 });
    policy.restore(partial);
    expect(policy.describe(T0 + 10_000).map((view) => view.server).sort()).toEqual([A, C]);
  });

  it('merges stored state into memory: the record changed last wins, and servers only one side knows are kept', () => {
    const tabOne = createWebppPolicy({ random: seededRandom(4), now: () => T0 + 10_000 });
    const tabTwo = createWebppPolicy({ random: seededRandom(5), now: () => T0 + 10_000 });
    for (let i = 0; i < 5; i++) tabOne.observe(served(A, 40, T0 + i));
    for (let i = 0; i < 5; i++) tabTwo.observe(served(A, 400, T0 + 1_000 + i)); // newer news of A
    tabTwo.observe(served(B, 90, T0 + 2_000));
    tabOne.observe(served(C, 70, T0 + 3_000));
    tabOne.restore(JSON.parse(JSON.stringify(tabTwo.snapshot())));
    const views = new Map(tabOne.describe(T0 + 5_000).map((view) => [view.server, view]));
    expect([...views.keys()].sort()).toEqual([A, B, C]);
    expect(views.get(A)?.ttfbEstimateMs).toBeGreaterThan(350);
    // An older stored state does not undo what memory learnt since.
    tabTwo.restore(JSON.parse(JSON.stringify(createWebppPolicy({ random: seededRandom(6), now: () => T0 }).snapshot())));
    expect(tabTwo.describe(T0 + 5_000).find((view) => view.server === A)?.ttfbEstimateMs).toBeGreaterThan(350);
    // Restoring one's own snapshot changes nothing.
    const before = JSON.stringify(tabOne.snapshot());
    tabOne.restore(JSON.parse(before));
    expect(JSON.stringify(tabOne.snapshot())).toBe(before);
  });

  it('dates stale future times back to now, and waits no longer than the probe cap', () => {
    const good = JSON.parse(JSON.stringify(trained().snapshot()));
    good.servers[C].nextProbeAtMs = T0 + 365 * 86_400_000;
    good.servers[A].lastSampleAtMs = T0 + 86_400_000;
    const policy = createWebppPolicy({ random: seededRandom(2), now: () => T0 });
    policy.restore(good);
    const views = policy.describe(T0);
    expect(views.find((view) => view.server === A)?.lastSampleAtMs).toBe(T0);
    expect(views.find((view) => view.server === C)?.nextProbeAtMs).toBeLessThanOrEqual(T0 + WEBPP_DEFAULTS.probeBackoffCapMs);
  });
});

describe('webpp describe (dashboard)', () => {
  it('shows estimates, throughput, failed servers and their next probe', () => {
    const policy = createWebppPolicy({ random: seededRandom(3), now: () => T0 });
    policy.plan({ logicalUrl: '/x', method: 'GET', candidates: [A, B, C], nowMs: T0 });
    for (let i = 0; i < 5; i++) policy.observe(served(A, 50, T0 + i, { bodyBytes: 100_000, bodyMs: 100 }));
    policy.observe({ server: B, purpose: 'request', outcome: 'timeout', nowMs: T0 + 10 });
    policy.observe({ server: B, purpose: 'request', outcome: 'timeout', nowMs: T0 + 20 });
    const views = new Map(policy.describe(T0 + 30).map((view) => [view.server, view]));
    expect(views.get(A)).toMatchObject({ state: 'available', sampleCount: 5 });
    expect(views.get(A)?.ttfbEstimateMs).toBeCloseTo(50, -1);
    expect(views.get(A)?.throughputBytesPerMs).toBeCloseTo(1_000, 0);
    expect(views.get(B)?.state).toBe('failed');
    expect(views.get(B)?.nextProbeAtMs).toBeGreaterThanOrEqual(T0 + 1_020);
    expect(views.get(C)).toMatchObject({ state: 'unknown', sampleCount: 0 });
  });

  it('tells subscribers at once when a server is ejected, and only then', () => {
    const policy = createWebppPolicy({ random: seededRandom(3), now: () => T0 }, { ejectAfterFailures: 2 });
    const heard: string[] = [];
    const unsubscribe = policy.onServerFailed((server) => heard.push(server));
    policy.observe({ server: A, purpose: 'request', outcome: 'network-error', nowMs: T0 });
    expect(heard).toEqual([]);
    policy.observe({ server: A, purpose: 'hedge', outcome: 'network-error', nowMs: T0 + 1 });
    expect(heard).toEqual([A]);
    policy.observe({ server: A, purpose: 'request', outcome: 'timeout', nowMs: T0 + 2 });
    expect(heard).toEqual([A]);
    policy.observe({ server: C, purpose: 'request', outcome: 'cut-mid-body', nowMs: T0 + 3 });
    expect(heard).toEqual([A, C]); // a body cut off: at once
    unsubscribe();
    policy.observe({ server: B, purpose: 'request', outcome: 'network-error', nowMs: T0 });
    policy.observe({ server: B, purpose: 'request', outcome: 'network-error', nowMs: T0 });
    expect(heard).toEqual([A, C]);
  });

  it('asks the engine to wake it when the next probe is due', () => {
    const policy = createWebppPolicy({ random: seededRandom(3), now: () => T0 });
    expect(policy.nextMaintenanceAtMs(T0)).toBeUndefined();
    policy.observe({ server: A, purpose: 'request', outcome: 'network-error', nowMs: T0 });
    policy.observe({ server: A, purpose: 'request', outcome: 'network-error', nowMs: T0 });
    const dueAtMs = policy.nextMaintenanceAtMs(T0) as number; // ejected at the first failure (default)
    expect(dueAtMs).toBeGreaterThanOrEqual(T0 + 1_000);
    expect(policy.maintenance({ candidates: [], inFlight: new Set(), nowMs: dueAtMs - 1 })).toEqual([]);
    expect(policy.maintenance({ candidates: [], inFlight: new Set(), nowMs: dueAtMs })).toEqual([{ server: A, purpose: 'probe', method: 'head' }]);
    const nextAtMs = policy.nextMaintenanceAtMs(dueAtMs) as number;
    expect(nextAtMs).toBeGreaterThanOrEqual(dueAtMs + 2_000);
    // Still in flight when the next probe is due: none is sent, and the timer moves on (no busy loop).
    expect(policy.maintenance({ candidates: [], inFlight: new Set([A]), nowMs: nextAtMs })).toEqual([]);
    // The third probe's backoff is at the cap (4 s): 2–4 s later (equal jitter).
    expect(policy.nextMaintenanceAtMs(nextAtMs) as number).toBeGreaterThanOrEqual(nextAtMs + 2_000);
  });
});
