/**
 * A server's own concurrency (issue 22 §2, bursts; concurrency.ts): a server that serves c
 * requests at once queues the rest of a burst whatever the browser's connection count. The
 * policy learns it from how the first byte grows with this client's exchanges ahead there,
 * and gives one answer to "how many at once" (exchangesAtOnce) for its pricing and the
 * engine's queue timers.
 */
import { describe, expect, it } from 'vitest';
import { ClientEngine, createWebppPolicy, type EngineIO, type Exchange, type ExchangeEvents, type ExchangeSample, type InFlightExchange } from '@webpp/core';
import { ServerConcurrency } from '../src/policies/webpp/concurrency.js';
import { seededRandom } from './fake-clock.js';

const A = 'http://a.localhost:8081';
const B = 'http://b.localhost:8082';
const KB = 1024;
const T0 = 1_700_000_000_000;
const HALF_LIFE_MS = 7_000;

/**
 * A burst of `size` exchanges sent at once to a server of `workers` workers with `serviceMs`
 * each (FCFS), `rttMs` away: the k-th to arrive waits floor(k / workers) services. Each waits
 * beside the size − 1 others. Returns [contending, ttfb].
 */
function burst(size: number, workers: number, serviceMs: number, rttMs: number, random: () => number): Array<[number, number]> {
  return Array.from({ length: size }, (_, k) => [size - 1, rttMs + serviceMs * (1 + Math.floor(k / workers)) * (0.8 + 0.4 * random())]);
}

/** Pages of different sizes, so that the contending exchanges spread. */
const PAGE_SIZES = [30, 8, 20, 4, 30, 12];

describe('ServerConcurrency', () => {
  it('measures the first byte\'s growth per exchange ahead (service / workers) and the exchanges taken at once', () => {
    const random = seededRandom(7);
    const limited = new ServerConcurrency();
    const open = new ServerConcurrency();
    let nowMs = T0;
    for (const size of PAGE_SIZES) {
      nowMs += 2_000;
      for (const [contending, ttfbMs] of burst(size, 2, 20, 50, random)) limited.add(contending, ttfbMs, nowMs, HALF_LIFE_MS);
      // A server without a limit: the first byte does not depend on the queue.
      for (let k = 0; k < size; k++) open.add(size - 1, 70 * (0.8 + 0.4 * random()), nowMs, HALF_LIFE_MS);
    }
    // 2 workers of 20 ms: 10 ms more per exchange ahead.
    expect(limited.perExchangeMs()).toBeGreaterThan(8);
    expect(limited.perExchangeMs()).toBeLessThan(12);
    // N* = unloaded first byte / slope: about 60 / 10.
    expect(limited.exchangesAtOnce()).toBeGreaterThanOrEqual(4);
    expect(limited.exchangesAtOnce()).toBeLessThanOrEqual(8);
    expect(open.perExchangeMs()).toBeLessThan(1);
    expect(open.exchangesAtOnce()).toBeGreaterThan(50);
  });

  it('knows nothing from exchanges all sent alone (no spread of contending exchanges)', () => {
    const estimate = new ServerConcurrency();
    for (let i = 0; i < 50; i++) estimate.add(0, 100 + (i % 7) * 10, T0 + i * 100, HALF_LIFE_MS);
    expect(estimate.perExchangeMs()).toBe(0);
    expect(estimate.exchangesAtOnce()).toBe(Number.POSITIVE_INFINITY);
  });

  it('does not read a rare stall behind a deep queue as a slow server (Huber clipping)', () => {
    const random = seededRandom(3);
    const clean = new ServerConcurrency();
    const stalled = new ServerConcurrency();
    let nowMs = T0;
    PAGE_SIZES.forEach((size, page) => {
      nowMs += 2_000;
      burst(size, 8, 10, 80, random).forEach(([contending, ttfbMs], k) => {
        clean.add(contending, ttfbMs, nowMs, HALF_LIFE_MS);
        // One first byte of the last page stalled for 5 s, beside 11 others.
        stalled.add(contending, page === PAGE_SIZES.length - 1 && k === 0 ? ttfbMs + 5_000 : ttfbMs, nowMs, HALF_LIFE_MS);
      });
    });
    expect(stalled.perExchangeMs()).toBeLessThan(clean.perExchangeMs() * 1.5 + 0.5);
  });
});

type Policy = ReturnType<typeof createWebppPolicy>;

/**
 * Teaches `server` over h2 (`aloneMs` first byte alone, 64 KB bodies at 4 MB/s): pages of
 * PAGE_SIZES exchanges, each sent at once; with `workers`, the k-th waits floor(k / workers) · 20 ms more.
 */
function teachBursts(policy: Policy, server: string, workers: number | undefined, startMs: number, aloneMs = 20): number {
  let nowMs = startMs;
  for (const size of PAGE_SIZES) {
    nowMs += 1_000;
    for (let k = 0; k < size; k++) {
      const ttfbMs = aloneMs + (workers === undefined ? 0 : Math.floor(k / workers) * 20);
      const queue = k > 0 ? { queuedAhead: k } : {};
      policy.observe({ server, purpose: 'request', outcome: 'served', nowMs: nowMs + ttfbMs + 16, ttfbMs, bodyBytes: 64 * KB, bodyMs: 16, protocol: 'h2', contending: size - 1, ...queue });
    }
  }
  return nowMs + 1_000;
}

/** `count` of this client's exchanges to `server`, sent just now, no head yet. */
const pending = (server: string, count: number, nowMs: number): InFlightExchange[] => Array.from({ length: count }, () => ({ server, sizeBytes: 1 * KB, sentAtMs: nowMs - 1 }));

describe('a server\'s own concurrency in the plan', () => {
  it('over h2, a burst queued at a server of two workers goes to the other replica; one without a limit keeps it', () => {
    for (const [workers, expected] of [[2, B], [undefined, A]] as const) {
      const policy = createWebppPolicy({ random: seededRandom(1), now: () => T0 });
      // B: 100 ms away (A 20 ms), without a limit. Thirty exchanges queued at A's two workers of 20 ms wait 300 ms.
      let nowMs = teachBursts(policy, A, workers, T0);
      nowMs = teachBursts(policy, B, undefined, nowMs - 1_000, 100);
      const plan = policy.plan({ logicalUrl: '/r.css', method: 'GET', candidates: [A, B], sizeBytes: 1 * KB, nowMs, inFlight: pending(A, 30, nowMs) });
      expect(plan[0]!.server, `workers ${workers}`).toBe(expected);
      // The one answer to "how many at once": h2's 100 streams, or the server's own concurrency when lower.
      if (workers === undefined) expect(policy.exchangesAtOnce(A)).toBe(100);
      else expect(policy.exchangesAtOnce(A)).toBeLessThan(6);
    }
  });

  it('a timeout behind more exchanges than the server takes at once is the client\'s queue, not the server\'s failure', () => {
    for (const [workers, state] of [[2, 'available'], [undefined, 'failed']] as const) {
      const policy = createWebppPolicy({ random: seededRandom(1), now: () => T0 });
      const nowMs = teachBursts(policy, A, workers, T0) + 10_000; // no answer from A for seconds
      // Twice: a silent timeout is a failure, and the second in a row ejects (server-record.ts, SILENT_FAILURES_TO_EJECT).
      policy.observe({ server: A, purpose: 'request', outcome: 'timeout', nowMs, queuedAhead: 12 });
      policy.observe({ server: A, purpose: 'request', outcome: 'timeout', nowMs: nowMs + 1, queuedAhead: 12 });
      expect(policy.describe(nowMs).find((view) => view.server === A)?.state, `workers ${workers}`).toBe(state);
    }
  });
});

describe('the engine\'s contending count (in-flight.ts)', () => {
  it('counts the exchanges to the same server that waited for their heads beside each one, whatever order the heads come in', () => {
    const sent: Array<{ exchange: Exchange; events: ExchangeEvents<string> }> = [];
    const io: EngineIO<string> = { now: () => T0, setTimer: () => () => undefined, send: (exchange, events) => (sent.push({ exchange, events }), () => undefined) };
    const samples: ExchangeSample[] = [];
    const policy = createWebppPolicy({ random: seededRandom(1), now: () => T0 });
    const engine = new ClientEngine({ policy, io, backgroundTarget: () => undefined, hooks: { sampleObserved: (sample) => void samples.push(sample) } });
    const request = (server: string): void => void engine.run([{ server, target: server, timeoutMs: 1_000, deadlineMs: 5_000, reason: 'test' }], () => undefined, { sizeBytes: 1 * KB });
    // Three to A at once, one to B; the last head from A comes first.
    request(A);
    request(A);
    request(B);
    request(A);
    for (const index of [3, 0, 2, 1]) sent[index]!.events.head({ status: 200, ttfbMs: 10, response: 'ok' });
    // A fourth to A after the heads: it waited beside nothing.
    request(A);
    sent[4]!.events.head({ status: 200, ttfbMs: 10, response: 'ok' });
    for (const { events } of sent) events.bodyComplete({ bodyBytes: 1 * KB, bodyMs: 1 });
    const contending = (server: string): Array<number> => samples.filter((sample) => sample.server === server).map((sample) => sample.contending ?? 0);
    expect(contending(A)).toEqual([2, 2, 2, 0]);
    expect(contending(B)).toEqual([0]);
  });
});
