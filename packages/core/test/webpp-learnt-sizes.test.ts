/**
 * The slow-body blind spot as the worker meets it (issue 11): the bindings carry no sizes,
 * so the first request of each URL is planned without one and the worker learns sizes from
 * responses. The cold start's free refreshes then go out before any large resource is known
 * to be in use, as HEADs, which time no body: the other servers' throughput stays unknown.
 * A server of unknown throughput is ranked at the average of the known ones — the slow
 * server's own — so a size-aware ranking kept the fast-first-byte, slow-body server for
 * every request (browser: 10× optimal in slow-body; the simulator, which always knows
 * sizes, 1.01×).
 */
import { describe, expect, it } from 'vitest';
import { createWebppPolicy } from '@webpp/core';
import { seededRandom } from './fake-clock.js';
import { drive, meanOf, type ServerModel } from './webpp-driver.js';

const A = 'http://a.localhost:8081';
const B = 'http://b.localhost:8082';
const C = 'http://c.localhost:8083';
const KB = 1024;
const START_MS = 1_000_000;

function steady(ttfbMs: number, bytesPerMs: number): ServerModel {
  return (_atMs, random) => ({ ttfbMs: ttfbMs * (0.9 + 0.2 * random()), bytesPerMs });
}

describe('webpp policy: sizes learnt from responses (the worker without binding sizes)', () => {
  // packages/netem/scenarios/slow-body.json: A 25 ms at 125 kB/s, B 90 ms at 2.5 MB/s, C 120 ms at 1.5 MB/s.
  const servers = { [A]: steady(25, 125), [B]: steady(90, 2_500), [C]: steady(120, 1_500) };

  it('measures the throughput of the other servers once large resources are in use, and moves 50 and 500 KB to the fast body', () => {
    const p = createWebppPolicy({ random: seededRandom(1), now: () => START_MS });
    const result = drive(p, { servers, requests: 30, intervalMs: 0, sizeBytes: (i) => (i % 2 === 0 ? 50 * KB : 500 * KB), random: seededRandom(2), learnSizes: true });
    // Ranged refreshes timed B's and C's bodies.
    const views = new Map(p.describe(result.endMs).map((view) => [view.server, view]));
    expect(views.get(B)?.throughputBytesPerMs).toBeGreaterThan(1_000);
    expect(views.get(C)?.throughputBytesPerMs).toBeGreaterThan(500);
    const later = result.served.slice(6);
    expect(later.filter((r) => r.server === B).length / later.length).toBeGreaterThan(0.9);
    // From B: 50 KB in ≈ 110 ms, 500 KB in ≈ 295 ms; from A 435 ms and 4.1 s.
    expect(meanOf(later.map((r) => r.totalMs))).toBeLessThan(1.15 * meanOf([90 + (50 * KB) / 2_500, 90 + (500 * KB) / 2_500]));
    // The throughput measurements are one ranged refresh per server, not a stream of them.
    expect(result.background.filter((r) => r.method === 'range').length).toBeLessThanOrEqual(4);
  });
});
