/**
 * The worker's side of the client aggregate (client-aggregate.ts), with the real webpp
 * policy: what a report carries (own measurements only, no URLs), how often it goes out,
 * and which header rows reach the policy.
 */
import { describe, expect, it } from 'vitest';
import { createWebppPolicy } from '@webpp/core';
import { ClientAggregate } from '../src/client-aggregate.js';

const SELF = 'http://a.localhost:8081';
const B = 'http://b.localhost:8082';
const C = 'http://c.localhost:8083';
const EVIL = 'http://evil.localhost:6666';
const T0 = 1_700_000_000_000;

function setUp() {
  let nowMs = T0;
  const policy = createWebppPolicy({ random: () => 0.5, now: () => nowMs });
  const posts: { url: string; init: RequestInit }[] = [];
  const aggregate = new ClientAggregate({
    policy,
    selfOrigin: SELF,
    isKnownServer: (server) => server !== EVIL,
    post: async (url, init) => {
      posts.push({ url, init });
      return new Response(null, { status: 204 });
    },
    now: () => nowMs,
  });
  const advance = (ms: number): void => void (nowMs += ms);
  const measure = (server: string, ttfbMs: number): void => policy.observe({ server, purpose: 'request', outcome: 'served', nowMs, ttfbMs });
  return { policy, aggregate, posts, advance, measure };
}

const header = (value: string): Response => new Response(null, { headers: { 'webpp-aggregate': value } });

describe('ClientAggregate', () => {
  it('does not report unless the own origin asks for it', async () => {
    const { aggregate, posts, advance, measure } = setUp();
    measure(B, 50);
    advance(3_600_000);
    await aggregate.maybeReport();
    expect(posts).toEqual([]);
  });

  it('reports its own smoothed times, once per interval, only for servers measured since the last report', async () => {
    const { aggregate, posts, advance, measure } = setUp();
    aggregate.read(header('report;interval=60'));
    measure(B, 80);
    measure(C, 20);
    await aggregate.maybeReport();
    expect(posts).toEqual([]); // the first report waits one interval
    advance(60_000);
    await aggregate.maybeReport();
    expect(posts).toHaveLength(1);
    expect(posts[0]?.url).toBe(`${SELF}/.well-known/webpp/client-reports`);
    expect(posts[0]?.init.credentials).toBe('omit');
    const body = JSON.parse(posts[0]?.init.body as string) as { rows: { server: string; responseMs: number }[] };
    expect(Object.keys(body)).toEqual(['rows']);
    expect(body.rows.map((row) => row.server).sort()).toEqual([B, C]);
    for (const row of body.rows) expect(Object.keys(row).sort()).toEqual(['responseMs', 'server']);
    expect(body.rows.find((row) => row.server === C)?.responseMs).toBeLessThan(body.rows.find((row) => row.server === B)?.responseMs ?? 0);
    // Within the interval: nothing; after it, only C was measured again.
    advance(1_000);
    measure(C, 25);
    advance(29_000);
    await aggregate.maybeReport();
    expect(posts).toHaveLength(1);
    advance(30_000);
    await aggregate.maybeReport();
    expect(posts).toHaveLength(2);
    expect((JSON.parse(posts[1]?.init.body as string) as { rows: { server: string }[] }).rows.map((row) => row.server)).toEqual([C]);
    expect(aggregate.view()).toMatchObject({ reportIntervalMs: 60_000, reportsSent: 2, reportsFailed: 0 });
  });

  it('hands the policy rows about servers the site uses, which then seed a fresh order', () => {
    const { policy, aggregate } = setUp();
    aggregate.read(header(`"${B}";dur=300;n=25, "${C}";dur=30;n=25, "${EVIL}";dur=1;n=99`));
    expect(aggregate.view().rows.map((row) => row.server)).toEqual([B, C]);
    const order = policy.plan({ logicalUrl: '/x', method: 'GET', candidates: [B, C], nowMs: T0 }).map((attempt) => attempt.server);
    expect(order).toEqual([C, B]);
  });
});
