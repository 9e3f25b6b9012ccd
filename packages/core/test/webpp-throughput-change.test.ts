/**
 * The webpp policy when a link's throughput changes (issue 11: estimates that age, peak-EWMA
 * style): a server in use whose bandwidth drops must lose the large files at its first slow
 * body, and a server re-measured after a while must be ranked by what the new measurement
 * says, not by the large bodies it sent long ago.
 */
import { describe, expect, it } from 'vitest';
import { createWebppPolicy } from '@webpp/core';
import { seededRandom } from './fake-clock.js';
import { drive, type ServerModel } from './webpp-driver.js';

const A = 'http://a.localhost:8081';
const B = 'http://b.localhost:8082';
const KB = 1024;
const START_MS = 1_000_000;
/** The paper's sizes, cycled: 0.5, 5, 50 and 500 KB. */
const SIZES = [512, 5 * KB, 50 * KB, 500 * KB];

function steady(ttfbMs: number, bytesPerMs: number): ServerModel {
  return (_atMs, random) => ({ ttfbMs: ttfbMs * (0.9 + 0.2 * random()), bytesPerMs });
}

/** `before` until atMs, then `after`. */
function changing(before: ServerModel, after: ServerModel, atMs: number): ServerModel {
  return (nowMs, random) => (nowMs < atMs ? before : after)(nowMs, random);
}

describe('webpp policy: a change of throughput', () => {
  it('moves large files off a server whose bandwidth drops, at its first slow body', () => {
    // packages/netem/scenarios/rotating.json: A goes from the best link (40 ms, 1.2 MB/s) to
    // the worst (260 ms, 200 kB/s) while B stays in the middle (130 ms, 500 kB/s).
    const changeAtMs = START_MS + 20_000;
    const servers = { [A]: changing(steady(40, 1_200), steady(260, 200), changeAtMs), [B]: steady(130, 500) };
    const result = drive(createWebppPolicy({ random: seededRandom(1), now: () => START_MS }), {
      servers,
      requests: 200,
      intervalMs: 0,
      sizeBytes: (i) => SIZES[i % SIZES.length] as number,
      random: seededRandom(2),
    });
    const before = result.served.filter((r) => r.startMs < changeAtMs);
    expect(before.filter((r) => r.server === A).length / before.length).toBeGreaterThan(0.9);
    // After the change a 500 KB file takes 2.8 s from A and 1.2 s from B: A may serve the one
    // large body that shows the change, no more.
    const largeAfter = result.served.filter((r, i) => r.startMs >= changeAtMs && SIZES[i % SIZES.length] === 500 * KB);
    expect(largeAfter.length).toBeGreaterThan(5);
    expect(largeAfter.filter((r) => r.server === A).length).toBeLessThanOrEqual(1);
  });

  it('ranks a server re-measured after a while by the new measurement, not by the large bodies it sent long ago', () => {
    const p = createWebppPolicy({ random: seededRandom(3), now: () => START_MS });
    const served = (server: string, nowMs: number, ttfbMs: number, bodyBytes: number, bytesPerMs: number): void =>
      p.observe({ server, purpose: 'request', outcome: 'served', nowMs, ttfbMs, bodyBytes, bodyMs: bodyBytes / bytesPerMs });
    // B was slow (150 kB/s) while it was in use, 30 s ago; A is in use at 400 kB/s.
    for (let i = 0; i < 10; i++) served(B, START_MS + i * 4_000, 100, 500 * KB, 150);
    for (let i = 0; i < 40; i++) served(A, START_MS + 40_000 + i * 1_000, 100, 500 * KB, 400);
    // Now one ranged refresh (32 KiB) shows B at 2 MB/s.
    const nowMs = START_MS + 80_000;
    p.observe({ server: B, purpose: 'refresh', outcome: 'served', nowMs, ttfbMs: 100, bodyBytes: 32 * KB, bodyMs: (32 * KB) / 2_000 });
    const rate = (server: string): number => p.describe(nowMs).find((view) => view.server === server)?.throughputBytesPerMs as number;
    expect(rate(B)).toBeGreaterThan(1_000);
    expect(p.plan({ logicalUrl: '/big', method: 'GET', candidates: [A, B], sizeBytes: 500 * KB, nowMs })[0]?.server).toBe(B);
  });
});
