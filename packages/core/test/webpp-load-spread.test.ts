/**
 * The load spread of the webpp policy (issue 13, against herding; load-spread.ts): idle
 * servers leave the equivalent-server set alone (one client keeps its single-client
 * quality); a busy member passes requests on to the other servers by degrees; the spill
 * falls back slowly; and while the servers are busy a client moves its first attempts at a
 * bounded rate.
 */
import { describe, expect, it } from 'vitest';
import { createWebppPolicy, resolveWebppOptions, type ExchangeSample } from '@webpp/core';
import { keepDrawn, SpillMemory, spreadWeights, SpreadStates } from '../src/policies/webpp/load-spread.js';
import { FakeClock, seededRandom } from './fake-clock.js';

const A = 'http://a.localhost:8081';
const B = 'http://b.localhost:8082';
const C = 'http://c.localhost:8083';
const T0 = 1_700_000_000_000;
const options = resolveWebppOptions({});
const near = { server: A, expectedMs: 30 };
const mid = { server: B, expectedMs: 50 };
const far = { server: C, expectedMs: 70 };
const ranked = [near, mid, far];

const weightOf = (spread: ReturnType<typeof spreadWeights>, server: string): number => spread.find((entry) => entry.server === server)?.weight ?? Number.NaN;

describe('spread weights', () => {
  it('keep to the set while the servers are idle', () => {
    const spread = spreadWeights(ranked, [near], () => 0, options, new SpillMemory(), T0);
    expect(weightOf(spread, A)).toBe(1);
    expect(weightOf(spread, B)).toBe(0);
    expect(weightOf(spread, C)).toBe(0);
    // Busy below loadSpreadFloorShare counts as idle: a few clients' own page loads.
    const light = spreadWeights(ranked, [near], () => options.loadSpreadFloorShare * 0.9, options, new SpillMemory(), T0);
    expect(weightOf(light, B)).toBe(0);
    expect(weightOf(light, A)).toBe(1);
  });

  it('pass more to the servers outside the set the busier the members are, less to a busy one', () => {
    const at = (busy: Record<string, number>) => spreadWeights(ranked, [near], (server) => busy[server] ?? 0, options, new SpillMemory(), T0);
    const half = at({ [A]: 0.3 });
    const busier = at({ [A]: 0.8 });
    expect(weightOf(half, B)).toBeGreaterThan(0);
    expect(weightOf(busier, B)).toBeGreaterThan(weightOf(half, B));
    expect(weightOf(busier, A)).toBeLessThan(weightOf(half, A));
    // The nearer server outside the set gets more; a busy one less.
    expect(weightOf(busier, B)).toBeGreaterThan(weightOf(busier, C));
    expect(weightOf(at({ [A]: 0.8, [B]: 0.9 }), B)).toBeLessThan(weightOf(busier, C));
  });

  it('are off with loadSpreadShare 0', () => {
    const off = resolveWebppOptions({ loadSpreadShare: 0 });
    const spread = spreadWeights(ranked, [near], () => 0.9, off, new SpillMemory(), T0);
    expect(weightOf(spread, B)).toBe(0);
  });
});

describe('spill memory', () => {
  it('rises at once and falls back with its half-life', () => {
    const memory = new SpillMemory();
    expect(memory.update(0.8, T0, options)).toBe(0.8);
    expect(memory.update(0, T0 + options.loadSpreadReleaseHalfLifeMs, options)).toBeCloseTo(0.4, 6);
    expect(memory.update(0.9, T0 + options.loadSpreadReleaseHalfLifeMs + 1, options)).toBe(0.9);
  });
});

describe('spread states', () => {
  it('are one per set of replicas, whatever the order of the candidates, and forget the least recently used set past the bound', () => {
    const states = new SpreadStates(2);
    const first = states.of([A, B]);
    first.drawn = A;
    expect(states.of([B, A])).toBe(first);
    states.of([C]);
    states.of([A, B]);
    states.of([B, C]);
    expect(states.of([A, B])).toBe(first);
    expect(states.of([C]).drawn).toBeUndefined();
  });
});

describe('inertia', () => {
  const spread = [
    { server: A, weight: 1 },
    { server: B, weight: 1 },
  ];

  /** Share of 10 000 requests whose server differs from the request before. */
  const moveShare = (loaded: boolean, state: { drawn?: string; random: () => number }): number => {
    let moves = 0;
    let last = keepDrawn(spread, state, state.random, options, A, loaded);
    for (let i = 0; i < 10_000; i++) {
      const next = keepDrawn(spread, state, state.random, options, A, loaded);
      if (next !== last) moves += 1;
      last = next;
    }
    return moves / 10_000;
  };

  it('keeps the drawn server on about 1 − spreadRedrawShare of requests while loaded', () => {
    // A redraw lands on the other of two equal servers half the time.
    expect(moveShare(true, { random: seededRandom(3) })).toBeCloseTo(options.spreadRedrawShare / 2, 1);
  });

  it('draws afresh on every request when the servers are idle, and at once when the held server has no weight', () => {
    const state: { drawn?: string; random: () => number } = { random: seededRandom(4) };
    expect(moveShare(false, state)).toBeCloseTo(0.5, 1);
    state.drawn = A;
    expect(keepDrawn([{ server: A, weight: 0 }, { server: B, weight: 1 }], state, state.random, options, A, true)).toBe(B);
  });
});

describe('in the policy', () => {
  const served = (server: string, ttfbMs: number, nowMs: number): ExchangeSample => ({ server, purpose: 'request', outcome: 'served', nowMs, ttfbMs });

  /** Share of 2 000 first attempts that do not go to A, the fastest, when A pushes `busyA`. */
  const awayFromA = (busyA: number | undefined): number => {
    const clock = new FakeClock(T0);
    const policy = createWebppPolicy({ random: seededRandom(9), now: clock.now }, {});
    for (let i = 0; i < 10; i++) {
      policy.observe(served(A, 30, T0 + i * 100));
      policy.observe(served(B, 50, T0 + i * 100 + 1));
      policy.observe(served(C, 70, T0 + i * 100 + 2));
    }
    clock.nowMs = T0 + 1_100;
    for (const server of [A, B, C]) policy.learnPushedServiceTime(server, 3, clock.nowMs, server === A ? busyA : 0.1);
    let away = 0;
    for (let i = 0; i < 2_000; i++) if (policy.plan({ logicalUrl: '/x', method: 'GET', candidates: [A, B, C], nowMs: clock.nowMs })[0]?.server !== A) away += 1;
    return away / 2_000;
  };

  it('sends every first attempt to the fastest server when it is idle or says nothing, and spreads when it is busy', () => {
    expect(awayFromA(undefined)).toBe(0);
    expect(awayFromA(0)).toBe(0);
    expect(awayFromA(0.9)).toBeGreaterThan(0.5);
  });

  it('keeps its drawn server per set of replicas: requests for other resources do not make it draw again', () => {
    // Images on A, B, C; scripts on D, E (other replicas). Both fastest servers are busy.
    const D = 'http://d.localhost:8084';
    const E = 'http://e.localhost:8085';
    const clock = new FakeClock(T0);
    const policy = createWebppPolicy({ random: seededRandom(12), now: clock.now }, {});
    const rtts: [string, number][] = [[A, 30], [B, 50], [C, 70], [D, 30], [E, 50]];
    for (let i = 0; i < 10; i++) for (const [server, ttfbMs] of rtts) policy.observe(served(server, ttfbMs, clock.advance(20)));
    for (const [server] of rtts) policy.learnPushedServiceTime(server, 3, clock.nowMs, server === A || server === D ? 0.9 : 0.1);
    const first = (candidates: string[]): string | undefined => policy.plan({ logicalUrl: '/x', method: 'GET', candidates, nowMs: clock.nowMs })[0]?.server;
    let moves = 0;
    let last = first([A, B, C]);
    for (let i = 0; i < 2_000; i++) {
      first([D, E]);
      const next = first([A, B, C]);
      if (next !== last) moves += 1;
      last = next;
    }
    // Inertia: a move on at most spreadRedrawShare of the image requests (a redraw may land on the same server).
    expect(moves / 2_000).toBeLessThan(options.spreadRedrawShare);
  });

  it('spills only for the set whose members are busy: resources bound to idle replicas stay on the nearest', () => {
    const D = 'http://d.localhost:8084';
    const E = 'http://e.localhost:8085';
    const clock = new FakeClock(T0);
    const policy = createWebppPolicy({ random: seededRandom(13), now: clock.now }, {});
    const rtts: [string, number][] = [[A, 30], [B, 50], [C, 70], [D, 30], [E, 50]];
    for (let i = 0; i < 10; i++) for (const [server, ttfbMs] of rtts) policy.observe(served(server, ttfbMs, clock.advance(20)));
    // The images' nearest replica is busy; the scripts' replicas are idle.
    for (const [server] of rtts) policy.learnPushedServiceTime(server, 3, clock.nowMs, server === A ? 0.9 : 0);
    const first = (candidates: string[]): string | undefined => policy.plan({ logicalUrl: '/x', method: 'GET', candidates, nowMs: clock.nowMs })[0]?.server;
    let imagesAway = 0;
    let scriptsAway = 0;
    for (let i = 0; i < 1_000; i++) {
      if (first([A, B, C]) !== A) imagesAway += 1;
      if (first([D, E]) !== D) scriptsAway += 1;
    }
    expect(imagesAway / 1_000).toBeGreaterThan(0.5);
    expect(scriptsAway).toBe(0);
  });

  it('forgets a utilisation older than pushMaxAgeMs, even while service times without one keep coming', () => {
    // A said once it was busy; since then its responses carry only dur (Resource Timing's
    // serverTiming has no util, or the server lost its concurrency limit): u is stale.
    const clock = new FakeClock(T0);
    const policy = createWebppPolicy({ random: seededRandom(11), now: clock.now }, {});
    const sample = (server: string, ttfbMs: number): void => policy.observe({ ...served(server, ttfbMs, clock.nowMs), serviceMs: 3 });
    for (let i = 0; i < 10; i++) {
      clock.advance(100);
      sample(A, 30);
      sample(B, 50);
      sample(C, 70);
    }
    policy.learnPushedServiceTime(A, 3, clock.nowMs, 0.9);
    const away = (): number => {
      let count = 0;
      for (let i = 0; i < 2_000; i++) if (policy.plan({ logicalUrl: '/x', method: 'GET', candidates: [A, B, C], nowMs: clock.nowMs })[0]?.server !== A) count += 1;
      return count / 2_000;
    };
    expect(away()).toBeGreaterThan(0.5);
    for (let i = 0; i < 180; i++) {
      clock.advance(1_000);
      // A Server-Timing without util (the worker's path), and samples with S (a driver's).
      policy.learnPushedServiceTime(A, 3, clock.nowMs);
      sample(A, 30);
      sample(B, 50);
      sample(C, 70);
    }
    expect(clock.nowMs - T0).toBeGreaterThan(options.pushMaxAgeMs * 3);
    expect(away()).toBeLessThan(0.01);
  });
});
