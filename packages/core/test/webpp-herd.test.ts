/**
 * Issue 13 in the webpp policy (Fei et al., INFOCOM 1998): the network factor A = R / S from
 * responses that carry a pushed service time, A × S for a server not heard from lately, the
 * equivalent-server set's join/leave hysteresis, the weighted pick inside it, and the order
 * of a first visit seeded from what the origin pushed.
 */
import { describe, expect, it } from 'vitest';
import { createWebppPolicy, resolveWebppOptions, WEBPP_DEFAULTS, type ExchangeSample } from '@webpp/core';
import { EquivalentSet } from '../src/policies/webpp/equivalent-set.js';
import { drawWeighted, SpillMemory, spreadWeights } from '../src/policies/webpp/load-spread.js';
import { PushedLoad } from '../src/policies/webpp/pushed-load.js';
import { FakeClock, seededRandom } from './fake-clock.js';

const A = 'http://a.localhost:8081';
const B = 'http://b.localhost:8082';
const C = 'http://c.localhost:8083';
const T0 = 1_700_000_000_000;

function served(server: string, ttfbMs: number, nowMs: number, extra: Partial<ExchangeSample> = {}): ExchangeSample {
  return { server, purpose: 'request', outcome: 'served', nowMs, ttfbMs, ...extra };
}

function newPolicy(clock: FakeClock, options: Record<string, unknown> = {}, seed = 1) {
  return createWebppPolicy({ random: seededRandom(seed), now: clock.now }, options);
}

const firstOf = (policy: ReturnType<typeof newPolicy>, nowMs: number, candidates = [A, B]) =>
  policy.plan({ logicalUrl: '/x', method: 'GET', candidates, nowMs })[0];

describe('network factor A = R / S (Fei, Section 4.3)', () => {
  const options = resolveWebppOptions();

  it('pairs a response time with the service time pushed on the same response, in either order', () => {
    const sOnSample = new PushedLoad();
    sOnSample.learnResponse(60, T0, T0 + 60, 12, options);
    expect(sOnSample.factor()).toBeCloseTo(5, 9);

    const sFirst = new PushedLoad();
    sFirst.learnService(20, T0 + 30, options); // Server-Timing read as the head came in
    sFirst.learnResponse(80, T0, T0 + 80, undefined, options);
    expect(sFirst.factor()).toBeCloseTo(4, 9);

    const sAfter = new PushedLoad();
    sAfter.learnResponse(90, T0, T0 + 90, undefined, options);
    expect(sAfter.factor()).toBeUndefined();
    sAfter.learnService(30, T0 + 95, options);
    expect(sAfter.factor()).toBeCloseTo(3, 9);
  });

  it('does not pair an S from long before or after the exchange, nor take an older S over a newer one', () => {
    const load = new PushedLoad();
    load.learnService(10, T0 - 5_000, options);
    load.learnResponse(60, T0, T0 + 60, undefined, options);
    expect(load.factor()).toBeUndefined();
    load.learnService(30, T0 + 10_000, options); // long after: another exchange's S
    expect(load.factor()).toBeUndefined();
    load.learnService(99, T0 + 9_000, options); // relayed, older than the one held
    expect(load.serviceMs).toBe(30);
  });

  it('counts R / S below 1 as 1 (R includes S: the smoothed S still lagged a drained queue)', () => {
    const load = new PushedLoad();
    load.learnResponse(45, T0, T0 + 45, 900, options);
    expect(load.factor()).toBe(1);
  });

  it('is the geometric mean of recent pairs, older pairs weighing less', () => {
    const load = new PushedLoad();
    load.learnResponse(40, T0, T0 + 40, 10, options); // R/S = 4
    load.learnResponse(90, T0 + 100, T0 + 190, 10, options); // R/S = 9
    expect(load.factor()).toBeCloseTo(6, 1); // √(4·9), the two almost the same age
    const later = T0 + 10 * options.estimateHalfLifeMs;
    load.learnResponse(20, later - 20, later, 10, options); // R/S = 2, the others ten half-lives old
    expect(load.factor()).toBeGreaterThan(2);
    expect(load.factor()).toBeLessThan(2.05);
  });

  it('ranks a server not heard from lately by A × S at once when a fresh S arrives', () => {
    const clock = new FakeClock(T0);
    const withPush = newPolicy(clock, { equivalentSetJoinRatio: 0, equivalentSetLeaveRatio: 0 });
    const withoutPush = newPolicy(clock, { equivalentSetJoinRatio: 0, equivalentSetLeaveRatio: 0, pushMaxAgeMs: 0 });
    for (const policy of [withPush, withoutPush]) {
      for (let i = 0; i < 10; i++) {
        const nowMs = T0 + i * 200;
        // A: 50 ms with S = 10 (A = 5); B: 100 ms with S = 80 (A = 1.25): B is busy.
        policy.observe(served(A, 50, nowMs, { serviceMs: 10 }));
        policy.observe(served(B, 100, nowMs + 1, { serviceMs: 80 }));
      }
    }
    clock.advance(WEBPP_DEFAULTS.pushAfterSilenceMs + 10_000);
    expect(firstOf(withPush, clock.nowMs)?.server).toBe(A);
    // B's queue drained: B pushes S = 20 (relayed by A, say); A × S = 25 ms beats A's 50 ms.
    withPush.learnPushedServiceTime(B, 20, clock.nowMs - 500);
    withoutPush.learnPushedServiceTime(B, 20, clock.nowMs - 500);
    expect(firstOf(withPush, clock.nowMs)?.server).toBe(B);
    expect(firstOf(withoutPush, clock.nowMs)?.server).toBe(A);
    // An S dated in the future, or older than pushMaxAgeMs, changes nothing.
    const other = newPolicy(clock, { equivalentSetJoinRatio: 0, equivalentSetLeaveRatio: 0 });
    other.observe(served(A, 50, clock.nowMs - WEBPP_DEFAULTS.pushAfterSilenceMs - 9_000, { serviceMs: 10 }));
    other.observe(served(B, 100, clock.nowMs - WEBPP_DEFAULTS.pushAfterSilenceMs - 9_000, { serviceMs: 80 }));
    other.learnPushedServiceTime(B, 20, clock.nowMs + 1_000);
    other.learnPushedServiceTime(B, 20, clock.nowMs - WEBPP_DEFAULTS.pushMaxAgeMs - 1);
    expect(firstOf(other, clock.nowMs)?.server).toBe(A);
  });

  it('keeps its own measurement for a server it heard from within pushAfterSilenceMs', () => {
    const clock = new FakeClock(T0);
    // pushSteerShare 0: only the silence rule (the default also shifts by the change of S, below).
    const policy = newPolicy(clock, { equivalentSetJoinRatio: 0, equivalentSetLeaveRatio: 0, pushSteerShare: 0 });
    for (let i = 0; i < 10; i++) {
      policy.observe(served(A, 50, T0 + i * 200, { serviceMs: 10 }));
      policy.observe(served(B, 100, T0 + i * 200 + 1, { serviceMs: 80 }));
    }
    clock.nowMs = T0 + 2_000;
    policy.learnPushedServiceTime(B, 20, clock.nowMs);
    expect(firstOf(policy, clock.nowMs)?.server).toBe(A);
  });

  it('shifts its own estimate by the change of the pushed S since it last measured the server (the queue steers every plan)', () => {
    const clock = new FakeClock(T0);
    const policy = newPolicy(clock, { equivalentSetJoinRatio: 0, equivalentSetLeaveRatio: 0 });
    for (let i = 0; i < 10; i++) {
      policy.observe(served(A, 50, T0 + i * 200, { serviceMs: 10 }));
      policy.observe(served(B, 100, T0 + i * 200 + 1, { serviceMs: 80 }));
    }
    clock.nowMs = T0 + 2_000;
    // B's queue drained by 60 ms: 100 − 60 = 40 < A's 50.
    policy.learnPushedServiceTime(B, 20, clock.nowMs);
    expect(firstOf(policy, clock.nowMs)?.server).toBe(B);
    // A's queue grows by 100 ms: A goes behind whatever it measured before.
    policy.learnPushedServiceTime(B, 80, clock.nowMs);
    policy.learnPushedServiceTime(A, 110, clock.nowMs);
    expect(firstOf(policy, clock.nowMs)?.server).toBe(B);
  });
});

describe('equivalent-server set (Fei, Section 4.3, "Avoiding Oscillations")', () => {
  const options = resolveWebppOptions(); // τ_join 0.1, τ_leave 0.4
  const members = (set: EquivalentSet, b: number) =>
    set
      .update([{ server: A, expectedMs: 100 }, { server: B, expectedMs: b }], options)
      .map((m) => m.server)
      .sort();

  it('joins within τ_join of the best and leaves only beyond τ_leave (hysteresis)', () => {
    const set = new EquivalentSet();
    expect(members(set, 120)).toEqual([A]); // 20 % behind: not close enough to join
    expect(members(set, 110)).toEqual([A, B]); // 10 %: joins
    expect(members(set, 135)).toEqual([A, B]); // 35 %: stays (≤ τ_leave)
    expect(members(set, 141)).toEqual([A]); // 41 %: leaves
    expect(members(set, 135)).toEqual([A]); // back to 35 %: does not rejoin until within τ_join
    expect(members(set, 105)).toEqual([A, B]);
  });

  it('always holds the best, even a newcomer, and a member that becomes best stays', () => {
    const set = new EquivalentSet();
    expect(members(set, 200)).toEqual([A]);
    expect(set.update([{ server: A, expectedMs: 100 }, { server: B, expectedMs: 50 }], options).map((m) => m.server).sort()).toEqual([B]);
  });

  it('with tight thresholds holds one server, as Fei Figure 9', () => {
    const tight = resolveWebppOptions({ equivalentSetJoinRatio: 0.05, equivalentSetLeaveRatio: 0.05 });
    const set = new EquivalentSet();
    expect(set.update([{ server: A, expectedMs: 100 }, { server: B, expectedMs: 108 }], tight).map((m) => m.server)).toEqual([A]);
  });

  it('rejects τ_leave < τ_join', () => {
    expect(() => resolveWebppOptions({ equivalentSetJoinRatio: 0.4, equivalentSetLeaveRatio: 0.1 })).toThrow(/equivalentSetLeaveRatio/);
  });
});

describe('weighted pick inside the set', () => {
  const shares = (exponent: number): Record<string, number> => {
    const random = seededRandom(7);
    const counts: Record<string, number> = { [A]: 0, [B]: 0 };
    const set = [{ server: A, expectedMs: 100 }, { server: B, expectedMs: 200 }];
    const options = resolveWebppOptions({ equivalentSetWeightExponent: exponent });
    const weights = spreadWeights(set, set, () => 0, options, new SpillMemory(), T0);
    for (let i = 0; i < 20_000; i++) counts[drawWeighted(weights, random, undefined)!]! += 1;
    return { [A]: counts[A]! / 20_000, [B]: counts[B]! / 20_000 };
  };

  it('is uniform with exponent 0 (Fei) and in proportion to speed with exponent 1', () => {
    expect(shares(0)[A]).toBeCloseTo(0.5, 1);
    expect(shares(1)[A]).toBeCloseTo(2 / 3, 1); // weights 1 and 100/200
    expect(shares(2)[A]).toBeCloseTo(0.8, 1); // weights 1 and 1/4
  });

  it('spreads a client\'s requests over the members in the policy, and not without sets', () => {
    const run = (options: Record<string, unknown>): Set<string> => {
      const clock = new FakeClock(T0);
      const policy = newPolicy(clock, options, 3);
      for (let i = 0; i < 10; i++) {
        policy.observe(served(A, 100, T0 + i * 100));
        policy.observe(served(B, 105, T0 + i * 100 + 1));
      }
      const picked = new Set<string>();
      for (let i = 0; i < 50; i++) picked.add(firstOf(policy, T0 + 1_000 + i)!.server);
      return picked;
    };
    expect(run({})).toEqual(new Set([A, B]));
    expect(run({ equivalentSetJoinRatio: 0, equivalentSetLeaveRatio: 0 })).toEqual(new Set([A]));
  });
});

describe('first visits: seeding an empty table', () => {
  const order = (policy: ReturnType<typeof newPolicy>, nowMs: number) =>
    policy.plan({ logicalUrl: '/', method: 'GET', candidates: [A, B, C], nowMs }).map((attempt) => [attempt.server, attempt.reason]);

  it('keeps the origin\'s order, moving a server whose pushed S is far above the others behind them', () => {
    const clock = new FakeClock(T0);
    const policy = newPolicy(clock);
    expect(order(policy, T0).map(([server]) => server)).toEqual([A, B, C]);
    policy.learnPushedServiceTime(A, 400, T0 - 100); // A is queueing
    policy.learnPushedServiceTime(B, 12, T0 - 100);
    policy.learnPushedServiceTime(C, 60, T0 - 100); // within seedServiceGapMs of B: keeps its place
    expect(order(policy, T0)).toEqual([
      [B, 'cold-start-origin-order'],
      [C, 'cold-start-origin-order'],
      [A, 'seed-pushed-load'],
    ]);
    // Stale pushed values do not count.
    expect(order(policy, T0 + WEBPP_DEFAULTS.pushMaxAgeMs + 1_000).map(([server]) => server)).toEqual([A, B, C]);
  });

  it('puts servers with an aggregate of other clients\' measurements first, fastest first', () => {
    const clock = new FakeClock(T0);
    const policy = newPolicy(clock);
    policy.learnAggregateResponseTimes(
      [
        { server: C, responseMs: 40, sampleCount: 30 },
        { server: B, responseMs: 90, sampleCount: 12 },
        { server: A, responseMs: -1, sampleCount: 5 }, // malformed: ignored
      ],
      T0,
    );
    expect(order(policy, T0)).toEqual([
      [C, 'seed-aggregate'],
      [B, 'seed-aggregate'],
      [A, 'cold-start-origin-order'],
    ]);
    // The client's own measurement replaces the seed.
    policy.observe(served(A, 20, T0 + 50));
    expect(order(policy, T0 + 100)[0]?.[0]).toBe(A);
  });
});
