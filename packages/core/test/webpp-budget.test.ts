/**
 * The webpp policy's one budget for extra work and its "busy, not dead" rule (issue 13 §4;
 * Envoy's retry budget, Finagle's RetryBudget; Envoy's outlier detection ejects on errors,
 * not on slowness), driven through the real client engine on a manual clock.
 */
import { describe, expect, it } from 'vitest';
import { ClientEngine, createWebppPolicy, WEBPP_DEFAULTS } from '@webpp/core';
import type { EngineIO, Exchange, ExchangeEvents, RunResult } from '@webpp/core';
import { seededRandom, VirtualTimers } from './fake-clock.js';

const T0 = 1_700_000_000_000;
const SERVERS = Array.from({ length: 10 }, (_, i) => `http://s${i}.localhost:${8080 + i}`);

/** A cluster whose every server is saturated: each exchange is answered `answerMs` after it is sent, with a pushed S of `serviceMs`. */
class SaturatedCluster extends VirtualTimers {
  readonly sent: Exchange[] = [];
  pushed: ((server: string, serviceMs: number, atMs: number) => void) | undefined;

  constructor(
    private readonly answerMs: number,
    private readonly serviceMs: number,
  ) {
    super(T0);
  }

  readonly io: EngineIO<string> = this.engineIO((exchange: Exchange, events: ExchangeEvents<string>) => {
    this.sent.push(exchange);
    let cancelled = false;
    const cancelTimer = this.timer(this.answerMs, () => {
      if (cancelled) return;
      // The head carries the server's Server-Timing and its peers' values (webpp-load), read before the sample as the worker does.
      for (const server of SERVERS) this.pushed?.(server, this.serviceMs, this.nowMs);
      events.head({ status: 200, ttfbMs: this.answerMs, response: exchange.server });
      events.bodyComplete({ bodyBytes: 1_000, bodyMs: 1 });
    });
    return () => {
      cancelled = true;
      cancelTimer();
    };
  });
}

function client(cluster: SaturatedCluster, options: Record<string, unknown> = {}) {
  const policy = createWebppPolicy({ random: seededRandom(7), now: () => cluster.nowMs }, options);
  cluster.pushed = (server, serviceMs, atMs) => policy.learnPushedServiceTime(server, serviceMs, atMs);
  const engine = new ClientEngine({ policy, io: cluster.io, backgroundTarget: (server) => `${server}/x` });
  /** One request, its maintenance as a driver runs it, then a think time; the result. */
  const request = (): RunResult<string> => {
    let result: RunResult<string> | undefined;
    const plan = engine.plan({ logicalUrl: '/page', method: 'GET', candidates: SERVERS }, (server) => `${server}/page`);
    engine.run(plan, (done) => {
      result = done;
      engine.maintain(SERVERS);
    });
    cluster.runUntil(() => result !== undefined, 120_000);
    cluster.runUntil(() => false, 1_000); // think time: background requests go out
    if (result === undefined) throw new Error('the request never ended');
    return result;
  };
  return { policy, engine, request };
}

describe('one budget for all extra work, on ten saturated servers', () => {
  it('sends no more extra requests than the budget allows, and no request fails for a timeout alone', () => {
    // Every answer takes 6 s: beyond the attempt timeout (2 s at a cold start) and its 5 s
    // deadline. The servers push S = 5 s (their queue), as the origin page's webpp-load did.
    const cluster = new SaturatedCluster(6_000, 5_000);
    const { policy, request } = client(cluster);
    for (const server of SERVERS) policy.learnPushedServiceTime(server, 5_000, cluster.nowMs);
    const requests = 40;
    const results = Array.from({ length: requests }, request);
    expect(results.filter((result) => result.kind !== 'served')).toEqual([]);
    const extra = cluster.sent.length - requests;
    const { extraBudgetShare, extraBudgetFloorTokens, bucketCapacityTokens } = WEBPP_DEFAULTS;
    // Over any run: spent ≤ share × requests + floor + the debt the bucket allows (its capacity).
    expect(extra).toBeLessThanOrEqual(Math.floor(extraBudgetShare * requests + extraBudgetFloorTokens + Math.max(extraBudgetFloorTokens, bucketCapacityTokens)));
    // The busy servers were not ejected: none is 'failed'.
    expect(policy.describe(cluster.nowMs).filter((view) => view.state === 'failed')).toEqual([]);
  });

  it('keeps waiting on a busy server when the budget is empty instead of piling a second request on', () => {
    const cluster = new SaturatedCluster(6_000, 5_000);
    const { policy, engine } = client(cluster, { extraBudgetFloorTokens: 1 });
    for (const server of SERVERS) policy.learnPushedServiceTime(server, 5_000, cluster.nowMs);
    // Spend the floor: the one token pays the first request's cold-start measurement.
    let result: RunResult<string> | undefined;
    engine.run(engine.plan({ logicalUrl: '/a', method: 'GET', candidates: SERVERS }, (server) => `${server}/a`), (done) => (result = done));
    engine.maintain(SERVERS);
    const sentBefore = cluster.sent.length;
    cluster.runUntil(() => result !== undefined, 60_000);
    expect(result?.kind).toBe('served');
    // The timeout (2 s) and the deadline (5 s) passed without a failover: one attempt, served at 6 s.
    expect(result?.attempts.map((attempt) => attempt.server)).toEqual([SERVERS[0]]);
    expect(cluster.sent.length).toBe(sentBefore);
  });
});

describe('busy, not dead: a timeout does not eject a server that is alive', () => {
  const timeout = (server: string, nowMs: number) => ({ server, purpose: 'request' as const, outcome: 'timeout' as const, nowMs });

  it('keeps a server whose pushed service time says it is queueing, and ejects one that pushes a normal time', () => {
    const policy = createWebppPolicy({ random: seededRandom(1), now: () => T0 });
    const [busy, quiet] = SERVERS as [string, string];
    policy.learnPushedServiceTime(busy, 1_500, T0 - 1_000); // 1.5 s of queueing: ≥ 0.25 × the 2 s timeout
    policy.learnPushedServiceTime(quiet, 5, T0 - 1_000);
    // Twice each: a silent timeout ejects as the second in a row.
    for (const atMs of [T0 - 1, T0]) {
      policy.observe(timeout(busy, atMs));
      policy.observe(timeout(quiet, atMs));
    }
    const state = (server: string) => policy.describe(T0).find((view) => view.server === server)?.state;
    expect(state(busy)).not.toBe('failed');
    expect(state(quiet)).toBe('failed');
    // The busy server is ranked by its large estimate: the other, measured fast, comes first.
    const other = SERVERS[2] as string;
    policy.observe({ server: other, purpose: 'request', outcome: 'served', nowMs: T0, ttfbMs: 50 });
    expect(policy.plan({ logicalUrl: '/x', method: 'GET', candidates: [busy, other], nowMs: T0 })[0]?.server).toBe(other);
  });

  it('keeps a server that answered another request while this one waited', () => {
    const policy = createWebppPolicy({ random: seededRandom(1), now: () => T0 }, { pushMaxAgeMs: 0 });
    const server = SERVERS[0] as string;
    policy.observe({ server, purpose: 'request', outcome: 'served', nowMs: T0 - 500, ttfbMs: 100 });
    policy.observe(timeout(server, T0));
    expect(policy.describe(T0).find((view) => view.server === server)?.state).not.toBe('failed');
    // Without any sign of life, the same timeout is a failure, and the second in a row ejects.
    policy.observe(timeout(SERVERS[1] as string, T0));
    policy.observe(timeout(SERVERS[1] as string, T0));
    expect(policy.describe(T0).find((view) => view.server === SERVERS[1])?.state).toBe('failed');
  });
});
