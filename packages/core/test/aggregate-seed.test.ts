/**
 * First visits seeded from the origin's client aggregate (issue 13 §6): the webpp-aggregate
 * header's wire format, and what a fresh visitor's policy does with it — servers with a row
 * first, fastest first, even when their pushed S says nothing is wrong; servers without one
 * fall back to pushed S and the origin's order.
 */
import { describe, expect, it } from 'vitest';
import { createWebppPolicy, encodeClientReport, formatAggregateHeader, parseAggregateHeader } from '@webpp/core';
import { FakeClock, seededRandom } from './fake-clock.js';

const A = 'http://a.localhost:8081';
const B = 'http://b.localhost:8082';
const C = 'http://c.localhost:8083';
const D = 'http://d.localhost:8084';
const T0 = 1_700_000_000_000;

describe('the webpp-aggregate header', () => {
  it('round-trips the report interval and the rows, rounded', () => {
    const value = formatAggregateHeader({ reportIntervalMs: 300_000, rows: [{ server: B, responseMs: 85.24, sampleCount: 31.7 }] });
    expect(value).toBe(`report;interval=300, "${B}";dur=85.2;n=31`);
    expect(parseAggregateHeader(value)).toEqual({ reportIntervalMs: 300_000, rows: [{ server: B, responseMs: 85.2, sampleCount: 31 }] });
  });

  it('skips what it does not know and rows without a count, and reads no interval when reports are off', () => {
    const parsed = parseAggregateHeader(`"${B}";dur=10;n=0, "${C}/path";dur=5;n=9, other;x=1, "${D}";dur=7;n=4;extra=1, "${A}";n=3`);
    expect(parsed).toEqual({ reportIntervalMs: undefined, rows: [{ server: D, responseMs: 7, sampleCount: 4 }] });
    expect(parseAggregateHeader(null)).toEqual({ reportIntervalMs: undefined, rows: [] });
  });

  it('reports carry a server and a time per row, nothing else', () => {
    expect(JSON.parse(encodeClientReport([{ server: B, responseMs: 12.345 }]))).toEqual({ rows: [{ server: B, responseMs: 12.3 }] });
  });
});

describe('a fresh visitor seeded from the aggregate', () => {
  const order = (policy: ReturnType<typeof createWebppPolicy>, nowMs: number): [string, string][] =>
    policy.plan({ logicalUrl: '/', method: 'GET', candidates: [A, B, C, D], nowMs }).map((attempt) => [attempt.server, attempt.reason]);

  it('ranks rows fastest first ahead of the rest, which follow pushed S and the origin\'s order', () => {
    const clock = new FakeClock(T0);
    const policy = createWebppPolicy({ random: seededRandom(1), now: clock.now });
    // A and B push low service times alike; C is queueing; D pushes nothing.
    for (const [server, serviceMs] of [[A, 5], [B, 6], [C, 500]] as const) policy.learnPushedServiceTime(server, serviceMs, T0 - 100);
    expect(order(policy, T0).map(([server]) => server)).toEqual([A, B, D, C]);
    // The aggregate of this network: A is slow from here although its push looks fine; B fast.
    const header = parseAggregateHeader(`report;interval=300, "${A}";dur=420;n=25, "${B}";dur=35;n=40`);
    policy.learnAggregateResponseTimes(header.rows, T0);
    expect(order(policy, T0)).toEqual([
      [B, 'seed-aggregate'],
      [A, 'seed-aggregate'],
      [D, 'cold-start-origin-order'],
      [C, 'seed-pushed-load'],
    ]);
  });
});
