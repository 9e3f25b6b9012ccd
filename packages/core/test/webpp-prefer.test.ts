/**
 * The driver's preferred server (PlanInput.preferred) and ClientPolicy.isSoleFirstChoice: the
 * worker sends navigations to the own origin first, and leaves subresources to the browser,
 * only where the policy holds the own origin as good as the best (its equivalent set), with
 * no hedge around it (issue 26, "no cost where it cannot help"; sw/src/direct.ts).
 */
import { describe, expect, it } from 'vitest';
import { createWebppPolicy, type ExchangeSample } from '@webpp/core';
import { FakeClock, seededRandom } from './fake-clock.js';

const A = 'http://a.localhost:8081';
const B = 'http://b.localhost:8082';
const C = 'http://c.localhost:8083';
const T0 = 1_700_000_000_000;

function served(server: string, ttfbMs: number, nowMs: number): ExchangeSample {
  return { server, purpose: 'request', outcome: 'served', nowMs, ttfbMs };
}

/** A policy that has measured each server at `ttfbMs[server]`, many times, just now. */
function measured(clock: FakeClock, ttfbMs: Record<string, number>, seed = 1) {
  const policy = createWebppPolicy({ random: seededRandom(seed), now: clock.now });
  for (let i = 0; i < 20; i++) {
    clock.advance(50);
    for (const [server, ms] of Object.entries(ttfbMs)) policy.observe(served(server, ms, clock.now()));
  }
  return policy;
}

const input = (clock: FakeClock, extra: Record<string, unknown> = {}) => ({ logicalUrl: '/x', method: 'GET', candidates: [A, B, C], nowMs: clock.now(), ...extra });

describe('PlanInput.preferred', () => {
  it('puts the preferred server first when it is as good as the best, where the draw alone would often not', () => {
    const clock = new FakeClock(T0);
    const policy = measured(clock, { [A]: 20, [B]: 20, [C]: 20 });
    const drawn = new Set<string>();
    for (let i = 0; i < 30; i++) {
      clock.advance(10);
      drawn.add(policy.plan(input(clock))[0]!.server);
      const preferred = policy.plan(input(clock, { preferred: A }))[0]!;
      expect(preferred.server).toBe(A);
      expect(preferred.hedgeAfterMs).toBeUndefined();
    }
    expect(drawn.size).toBeGreaterThan(1); // without the preference the policy spreads over the three
  });

  it('puts it first outside the equivalent set when the difference is within the estimates\' standard error, not when samples resolve it', () => {
    // Noisy: A 10 or 50 ms (mean 30), B and C 10 or 40 ms (mean 25): 20 % behind, outside τ_join,
    // but one standard error of the difference (√(20²/n + 15²/n), n ≈ 20) covers the 5 ms.
    const noisyClock = new FakeClock(T0);
    const noisy = createWebppPolicy({ random: seededRandom(3), now: noisyClock.now });
    for (let i = 0; i < 20; i++) {
      noisyClock.advance(50);
      noisy.observe(served(A, i % 2 === 0 ? 10 : 50, noisyClock.now()));
      noisy.observe(served(B, i % 2 === 0 ? 10 : 40, noisyClock.now()));
      noisy.observe(served(C, i % 2 === 0 ? 10 : 40, noisyClock.now()));
    }
    expect(noisy.plan(input(noisyClock, { preferred: A }))[0]!.server).toBe(A);
    expect(noisy.isSoleFirstChoice(input(noisyClock), A)).toBe(true);
    // Steady: A always 30, B and C always 25: the same 5 ms, resolved by the samples.
    const steadyClock = new FakeClock(T0);
    const steady = measured(steadyClock, { [A]: 30, [B]: 25, [C]: 25 });
    expect(steady.plan(input(steadyClock, { preferred: A }))[0]!.server).not.toBe(A);
    expect(steady.isSoleFirstChoice(input(steadyClock), A)).toBe(false);
  });

  it('never puts a clearly slower preferred server first', () => {
    const clock = new FakeClock(T0);
    const policy = measured(clock, { [A]: 200, [B]: 20, [C]: 25 });
    for (let i = 0; i < 10; i++) {
      clock.advance(10);
      expect(policy.plan(input(clock, { preferred: A }))[0]!.server).not.toBe(A);
    }
  });
});

describe('isSoleFirstChoice', () => {
  it('is true for a server in the equivalent set of the best, and for the single best', () => {
    const clock = new FakeClock(T0);
    expect(measured(clock, { [A]: 20, [B]: 20, [C]: 20 }).isSoleFirstChoice(input(clock), A)).toBe(true);
    const clock2 = new FakeClock(T0);
    expect(measured(clock2, { [A]: 10, [B]: 40, [C]: 60 }).isSoleFirstChoice(input(clock2), A)).toBe(true);
  });

  it('is false when another replica is clearly better, or the server failed, or nothing is measured', () => {
    const clock = new FakeClock(T0);
    const slower = measured(clock, { [A]: 200, [B]: 20, [C]: 25 });
    expect(slower.isSoleFirstChoice(input(clock), A)).toBe(false);

    const failed = measured(clock, { [A]: 20, [B]: 20, [C]: 20 });
    for (let i = 0; i < 5; i++) failed.observe({ server: A, purpose: 'request', outcome: 'network-error', nowMs: clock.now() });
    expect(failed.isSoleFirstChoice(input(clock), A)).toBe(false);

    const fresh = createWebppPolicy({ random: seededRandom(1), now: clock.now });
    expect(fresh.isSoleFirstChoice(input(clock), A)).toBe(false);
  });

  it('is false for a server whose tail the policy would hedge', () => {
    const clock = new FakeClock(T0);
    const policy = createWebppPolicy({ random: seededRandom(1), now: clock.now });
    // A: fast but stalls one time in ten; B and C steady and a little slower on average.
    for (let i = 0; i < 60; i++) {
      clock.advance(50);
      policy.observe(served(A, i % 10 === 0 ? 1_500 : 10, clock.now()));
      policy.observe(served(B, 30, clock.now()));
      policy.observe(served(C, 30, clock.now()));
    }
    const plan = policy.plan(input(clock, { preferred: A }));
    const hedged = plan[0]?.server === A && plan.some((attempt) => attempt.hedgeAfterMs !== undefined);
    // Whatever the plan, the answer agrees with it: A alone first, or not.
    expect(policy.isSoleFirstChoice(input(clock), A)).toBe(plan[0]?.server === A && !hedged);
  });

  it('leaves the request to the browser when the hedge would save less than the worker costs, not when it saves more', () => {
    // Three equal replicas on a fast link, 3 ms first bytes, one in ten late by up to 3 × `tailMs`.
    // Planned requests earn hedge tokens, so the policy hedges the own origin once it can afford
    // to; before, any hedge kept every request with the worker (page-cost's warm worker left 3
    // of ~320 requests to the browser). Answer: sole first choice while the hedge's expected
    // saving is below the worker's own per-request cost, and not once the tail makes it larger.
    const soleShare = (tailMs: number): { hedged: number; sole: number } => {
      const clock = new FakeClock(T0);
      const policy = createWebppPolicy({ random: seededRandom(1), now: clock.now });
      const draw = seededRandom(9);
      let hedged = 0;
      let sole = 0;
      for (let i = 0; i < 200; i++) {
        clock.advance(50);
        const request = { logicalUrl: `/x${i}`, method: 'GET', candidates: [A, B, C], nowMs: clock.now(), sizeBytes: 5_000 };
        if (i >= 100) {
          if (policy.plan({ ...request, preferred: A }).some((attempt) => attempt.hedgeAfterMs !== undefined)) hedged++;
          if (policy.isSoleFirstChoice(request, A)) sole++;
        } else policy.plan(request);
        for (const server of [A, B, C]) {
          const ttfbMs = 3 + (draw() < 0.1 ? tailMs * draw() * 3 : (draw() * tailMs) / 3);
          policy.observe(served(server, ttfbMs, clock.now()));
        }
      }
      return { hedged, sole };
    };
    const mild = soleShare(10);
    expect(mild.hedged).toBe(100); // the policy does hedge these plans…
    expect(mild.sole).toBe(100); // …but a hedge worth under 3 ms does not keep them with the worker
    const heavy = soleShare(300);
    expect(heavy.hedged).toBe(100);
    expect(heavy.sole).toBe(0); // a tail of up to ~1 s is worth the worker's cost
  });

  it('is false while the servers ask for load to be spread, but not for a URL bound to that server alone (nowhere to spread it)', () => {
    const clock = new FakeClock(T0);
    const policy = measured(clock, { [A]: 20, [B]: 20, [C]: 20 });
    // Every server reports itself busy (Server-Timing utilisation): the set spills.
    for (const server of [A, B, C]) policy.learnPushedServiceTime?.(server, 20, clock.now(), 0.9);
    expect(policy.isSoleFirstChoice(input(clock), A)).toBe(false);
    // Before, a URL bound to A alone was kept by the worker too: a spread with one server changes nothing.
    expect(policy.isSoleFirstChoice(input(clock, { candidates: [A] }), A)).toBe(true);
  });

  it('changes no budget: asking many times leaves the plans as they were', () => {
    const clockA = new FakeClock(T0);
    const clockB = new FakeClock(T0);
    const asked = measured(clockA, { [A]: 20, [B]: 22, [C]: 60 }, 7);
    const notAsked = measured(clockB, { [A]: 20, [B]: 22, [C]: 60 }, 7);
    for (let i = 0; i < 100; i++) asked.isSoleFirstChoice(input(clockA), A);
    for (let i = 0; i < 20; i++) {
      clockA.advance(10);
      clockB.advance(10);
      expect(asked.plan(input(clockA))).toEqual(notAsked.plan(input(clockB)));
    }
  });
});
