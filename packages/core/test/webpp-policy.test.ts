/**
 * The webpp policy against each blind spot of the paper's policy (issue 11), with a fake
 * clock and seeded randomness: pure tests of the policy, driven by webpp-driver.ts.
 */
import { describe, expect, it } from 'vitest';
import { createWebppPolicy, type PlannedAttempt } from '@webpp/core';
import { seededRandom } from './fake-clock.js';
import { drive, meanOf, quantileOf, type ServerModel } from './webpp-driver.js';

const A = 'http://a.localhost:8081';
const B = 'http://b.localhost:8082';
const C = 'http://c.localhost:8083';
const KB = 1024;

/** Lognormal first byte around meanMs (spread sd/mean = cv) and a body rate in bytes per ms. */
function link(meanMs: number, bytesPerMs: number, cv = 0.25): ServerModel {
  const sigma = Math.sqrt(Math.log(1 + cv * cv));
  return (_atMs, random) => {
    const normal = Math.sqrt(-2 * Math.log(1 - random())) * Math.cos(2 * Math.PI * random());
    return { ttfbMs: meanMs * Math.exp(sigma * normal - (sigma * sigma) / 2), bytesPerMs };
  };
}

/** `model`, but with probability `share` the first byte stalls for stallMs more. */
function stalling(model: ServerModel, share: number, stallMs: number): ServerModel {
  return (atMs, random) => {
    const answer = model(atMs, random);
    if (typeof answer === 'string' || random() >= share) return answer;
    return { ...answer, ttfbMs: answer.ttfbMs + stallMs };
  };
}

/** `good` and `bad` by turns, each for periodMs, good first (from startMs). */
function flapping(good: ServerModel, bad: ServerModel, periodMs: number, startMs: number): ServerModel {
  return (atMs, random) => (Math.floor((atMs - startMs) / periodMs) % 2 === 0 ? good : bad)(atMs, random);
}

function down(model: ServerModel, fromMs: number, toMs: number, mode: 'refuse' | 'hang'): ServerModel {
  return (atMs, random) => (atMs >= fromMs && atMs < toMs ? mode : model(atMs, random));
}

const START_MS = 1_000_000;

function policy(seed = 1, options: Record<string, unknown> = {}) {
  const random = seededRandom(seed);
  return createWebppPolicy({ random, now: () => START_MS }, options);
}

function extraShare(result: ReturnType<typeof drive>): number {
  return (result.hedges + result.refreshes + result.probes) / (result.served.length + result.failed);
}

describe('webpp policy: cold start', () => {
  it('uses the origin order, not a random pick, while nothing is measured', () => {
    const random = () => {
      throw new Error('a cold start must not draw at random');
    };
    const p = createWebppPolicy({ random, now: () => START_MS });
    // The client's very first request (its size not known to be small) races the first three in the origin's order.
    const first = p.plan({ logicalUrl: '/x', method: 'GET', candidates: [A, B, C], nowMs: START_MS });
    expect(first.map((a) => [a.server, a.reason, a.hedgeAfterMs])).toEqual([
      [A, 'cold-start-origin-order', undefined],
      [B, 'cold-start-race', 0],
      [C, 'cold-start-race', 0],
    ]);
    for (const candidates of [[A, B, C], [C, A, B], [B, C, A]]) {
      const attempts = p.plan({ logicalUrl: '/x', method: 'GET', candidates, nowMs: START_MS });
      expect(attempts.map((a) => a.server)).toEqual(candidates);
      expect(attempts.every((a) => a.reason === 'cold-start-origin-order' && a.hedgeAfterMs === undefined)).toBe(true);
    }
  });

  it('measures the other replicas of the first page at once, within the extra budget, then ranks by what it learnt', () => {
    const p = policy();
    const result = drive(p, { servers: { [A]: link(150, 500), [B]: link(40, 500), [C]: link(90, 500) }, requests: 30, intervalMs: 50, sizeBytes: 2 * KB, random: seededRandom(7) });
    // The first request goes to A (origin order); free refreshes of B and C teach the rest.
    expect(result.served[0]?.server).toBe(A);
    expect(result.background.filter((r) => r.purpose === 'refresh').slice(0, 2).map((r) => r.server).sort()).toEqual([B, C]);
    // They are paid from the extra budget (a floor of 3, 5 % of 30 requests, at most 3 in debt).
    expect(result.background.length).toBeLessThanOrEqual(3 + Math.floor(0.05 * 30) + 3);
    expect(result.served.slice(5).every((r) => r.server === B)).toBe(true);
  });
});

describe('webpp policy: size-aware (fast first byte, slow body)', () => {
  // A answers first but sends 50 KB/s; B answers 50 ms later at 2 MB/s.
  const servers = { [A]: link(30, 50, 0.1), [B]: link(80, 2_000, 0.1) };

  for (const sizeBytes of [50 * KB, 500 * KB]) {
    it(`sends ${sizeBytes / KB} KB files to the fast body, not the fast first byte`, () => {
      const result = drive(policy(), { servers, requests: 200, intervalMs: 100, sizeBytes, random: seededRandom(3) });
      const later = result.served.slice(10);
      expect(later.filter((r) => r.server === B).length / later.length).toBeGreaterThan(0.95);
      const bestMs = 80 + sizeBytes / 2_000;
      expect(meanOf(later.map((r) => r.totalMs))).toBeLessThan(1.15 * bestMs);
      expect(extraShare(result)).toBeLessThanOrEqual(0.05 + 2 / 200); // + the cold start's free refreshes
    });
  }

  it('sends small files to the fast first byte', () => {
    const result = drive(policy(), { servers, requests: 200, intervalMs: 100, sizeBytes: 1 * KB, random: seededRandom(3) });
    const later = result.served.slice(10);
    expect(later.filter((r) => r.server === A).length / later.length).toBeGreaterThan(0.9);
  });

  it('ranks one mix of sizes both ways at once', () => {
    const p = policy();
    drive(p, { servers, requests: 100, intervalMs: 100, sizeBytes: (i) => (i % 2 === 0 ? 1 * KB : 500 * KB), random: seededRandom(5) });
    const first = (sizeBytes: number): string | undefined => p.plan({ logicalUrl: '/x', method: 'GET', candidates: [A, B], sizeBytes, nowMs: START_MS + 20_000 })[0]?.server;
    expect(first(1 * KB)).toBe(A);
    expect(first(50 * KB)).toBe(B);
    expect(first(500 * KB)).toBe(B);
  });
});

describe('webpp policy: heavy tail (rare stalls)', () => {
  it('keeps the fast replica for its fast majority and hedges its stalls within budget', () => {
    // A: 40 ms, but 2 % of first bytes stall for 2 s (mean 80 ms); B: a steady 120 ms.
    const servers = { [A]: stalling(link(40, 1_000, 0.2), 0.02, 2_000), [B]: link(120, 1_000, 0.1) };
    const result = drive(policy(), { servers, requests: 2_000, intervalMs: 100, sizeBytes: 4 * KB, random: seededRandom(11) });
    const times = result.served.map((r) => r.totalMs);
    expect(result.failed).toBe(0);
    expect(result.served.filter((r) => r.server === A).length / result.served.length).toBeGreaterThan(0.9);
    // Without hedges, A's stalls cost 2 % × 2 s = 40 ms on its mean; with them, much less.
    expect(meanOf(times)).toBeLessThan(60);
    expect(quantileOf(times, 0.99)).toBeLessThan(400);
    expect(result.hedges / result.served.length).toBeLessThanOrEqual(0.03);
    expect(extraShare(result)).toBeLessThanOrEqual(0.05);
  });
});

describe('webpp policy: estimates that age', () => {
  it('weighs a sample by its age in time, not by the number of samples since', () => {
    const p = policy();
    for (let i = 0; i < 20; i++) p.observe({ server: A, purpose: 'request', outcome: 'served', nowMs: START_MS + i, ttfbMs: 100 });
    p.observe({ server: A, purpose: 'refresh', outcome: 'served', nowMs: START_MS + 20, ttfbMs: 20 });
    const fresh = p.describe(START_MS + 20)[0]?.ttfbEstimateMs as number;
    const q = policy();
    for (let i = 0; i < 20; i++) q.observe({ server: A, purpose: 'request', outcome: 'served', nowMs: START_MS + i, ttfbMs: 100 });
    q.observe({ server: A, purpose: 'refresh', outcome: 'served', nowMs: START_MS + 60_000, ttfbMs: 20 });
    const aged = q.describe(START_MS + 60_000)[0]?.ttfbEstimateMs as number;
    expect(fresh).toBeGreaterThan(90); // one sample among 21 of the same age
    expect(aged).toBeLessThan(25); // 60 s = 8.6 half-lives: the old ones weigh 0.26 % each
  });

  it('counts exchanges that waited together at a server as one sample, not as many', () => {
    // A burst of six at once (each with the five others contending), then one answer on its own.
    const estimateAfter = (contending: number): number => {
      const p = policy();
      for (let i = 0; i < 6; i++) p.observe({ server: A, purpose: 'request', outcome: 'served', nowMs: START_MS, ttfbMs: 150, contending });
      p.observe({ server: A, purpose: 'refresh', outcome: 'served', nowMs: START_MS + 10, ttfbMs: 10 });
      return p.describe(START_MS + 10)[0]?.ttfbEstimateMs as number;
    };
    // Counted as six: the lone answer is 1/7 of the estimate; as one moment, half of it.
    expect(estimateAfter(0)).toBeGreaterThan(120);
    expect(estimateAfter(5)).toBeLessThan(85);
  });

  it('follows a replica flapping every 10 s, and does no harm when it flaps faster', () => {
    const run = (periodMs: number) => {
      // A alternates between 40 ms and 400 ms; B is a steady 120 ms.
      const servers = { [A]: flapping(link(40, 1_000, 0.2), link(400, 1_000, 0.2), periodMs, START_MS), [B]: link(120, 1_000, 0.1) };
      return drive(policy(), { servers, requests: 1_500, intervalMs: 100, sizeBytes: 4 * KB, random: seededRandom(13) });
    };
    const slow = run(10_000);
    // Always A: (40 + 400)/2 + 4 ≈ 224 ms; always B: 124 ms; the better one at each moment: ≈ 84 ms.
    expect(meanOf(slow.served.map((r) => r.totalMs))).toBeLessThan(115);
    for (const periodMs of [3_000, 5_000]) {
      const fast = run(periodMs);
      // Too fast to follow within the budget: close to staying on B, far from following A.
      expect(meanOf(fast.served.map((r) => r.totalMs))).toBeLessThan(1.05 * 124);
      expect(fast.failed).toBe(0);
      expect(extraShare(fast)).toBeLessThanOrEqual(0.05);
    }
    expect(slow.failed).toBe(0);
    expect(extraShare(slow)).toBeLessThanOrEqual(0.05);
  });

  it('notices within seconds when the best server changes (best server rotating)', () => {
    const periodMs = 20_000;
    const rotating = (index: number): ServerModel => (atMs, random) =>
      (Math.floor((atMs - START_MS) / periodMs) % 3 === index ? link(40, 1_000, 0.2) : link(200, 1_000, 0.2))(atMs, random);
    const result = drive(policy(), { servers: { [A]: rotating(0), [B]: rotating(1), [C]: rotating(2) }, requests: 1_200, intervalMs: 100, sizeBytes: 4 * KB, random: seededRandom(17) });
    for (let period = 1; period < 6; period++) {
      const best = [A, B, C][period % 3];
      const from = START_MS + period * periodMs + 5_000;
      const window = result.served.filter((r) => r.startMs >= from && r.startMs < from + 15_000);
      expect(window.filter((r) => r.server === best).length / window.length, `period ${period}`).toBeGreaterThan(0.85);
    }
    expect(extraShare(result)).toBeLessThanOrEqual(0.05);
  });
});

describe('webpp policy: outage and return', () => {
  for (const mode of ['refuse', 'hang'] as const) {
    it(`fails over from a best server that goes down (${mode}), probes it with backoff, and uses it again soon after it recovers`, () => {
      const fromMs = START_MS + 20_000;
      const toMs = START_MS + 50_000;
      const servers = { [A]: down(link(40, 1_000, 0.2), fromMs, toMs, mode), [B]: link(120, 1_000, 0.1) };
      const p = policy(23);
      const ejected: string[] = [];
      p.onServerFailed((server) => ejected.push(server));
      const result = drive(p, { servers, requests: 900, intervalMs: 100, sizeBytes: 4 * KB, random: seededRandom(19) });
      expect(result.failed).toBe(0);
      expect(ejected).toContain(A);
      const during = result.served.filter((r) => r.startMs >= fromMs + 3_000 && r.startMs < toMs);
      expect(during.every((r) => r.server === B)).toBe(true);
      // Probes: the jittered exponential backoff, and early ones from the refresh budget. Once
      // the budget is at its debt limit the backoff's probes go free, bounded by the backoff
      // itself (one per 2–4 s at its cap, probeBackoffCapMs): at most 5 % plus those.
      expect(result.probes).toBeGreaterThanOrEqual(3);
      const requests = result.served.length + result.failed;
      expect(result.hedges + result.refreshes + result.probes).toBeLessThanOrEqual(0.05 * requests + (toMs - fromMs) / 2_000);
      const backOn = result.served.find((r) => r.startMs >= toMs && r.server === A);
      expect(backOn).toBeDefined();
      // The probes were at most ~16–32 s apart by then; back within that, not in 28.8 h.
      expect((backOn?.startMs ?? Infinity) - toMs).toBeLessThan(20_000);
      const after = result.served.filter((r) => r.startMs >= (backOn?.startMs ?? Infinity) + 2_000);
      expect(after.filter((r) => r.server === A).length / after.length).toBeGreaterThan(0.9);
    });
  }

  it('returns within seconds from a short outage', () => {
    const fromMs = START_MS + 20_000;
    const toMs = START_MS + 25_000;
    const servers = { [A]: down(link(40, 1_000, 0.2), fromMs, toMs, 'refuse'), [B]: link(120, 1_000, 0.1) };
    const result = drive(policy(29), { servers, requests: 600, intervalMs: 100, sizeBytes: 4 * KB, random: seededRandom(31) });
    const backOn = result.served.find((r) => r.startMs >= toMs && r.server === A);
    expect((backOn?.startMs ?? Infinity) - toMs).toBeLessThan(8_000);
  });

  it('probes an ejected server when its backoff is due even with the extra budget in debt at its limit', () => {
    const p = policy(3);
    for (let i = 0; i < 10; i++) p.observe({ server: A, purpose: 'request', outcome: 'served', nowMs: START_MS + i, ttfbMs: 40 });
    for (let i = 0; i < 10; i++) p.observe({ server: B, purpose: 'request', outcome: 'served', nowMs: START_MS + i, ttfbMs: 90 });
    // An outage's failovers and re-decisions spend the one budget: 5xx failovers charge it down to its debt limit.
    for (let i = 0; i < 10; i++) p.observe({ server: B, purpose: 'request', outcome: 'server-error', nowMs: START_MS + 20 + i, ttfbMs: 5 });
    p.observe({ server: A, purpose: 'request', outcome: 'network-error', nowMs: START_MS + 100 });
    expect(p.describe(START_MS + 100).find((view) => view.server === A)?.state).toBe('failed');
    // The first probe is due 1–2 s after the ejection. Before, with the debt at its limit it waited another
    // backoff step, and again, while nothing repaid the debt: the best server stayed out for 8 s after its outage.
    const probes = (nowMs: number) => p.maintenance({ candidates: [], inFlight: new Set(), nowMs }).filter((request) => request.purpose === 'probe' && request.server === A);
    expect(probes(START_MS + 2_200)).toHaveLength(1);
  });

  it('ranks a server back from its outage by its answers, not by the timeouts that ejected it', () => {
    const p = policy(4);
    for (let i = 0; i < 20; i++) p.observe({ server: A, purpose: 'request', outcome: 'served', nowMs: START_MS + i * 100, ttfbMs: 40 });
    for (let i = 0; i < 20; i++) p.observe({ server: B, purpose: 'request', outcome: 'served', nowMs: START_MS + i * 100, ttfbMs: 90 });
    // A hangs: two silent timeouts in a row eject it.
    p.observe({ server: A, purpose: 'request', outcome: 'timeout', nowMs: START_MS + 2_500 });
    p.observe({ server: A, purpose: 'request', outcome: 'timeout', nowMs: START_MS + 3_100 });
    expect(p.describe(START_MS + 3_100).find((view) => view.server === A)?.state).toBe('failed');
    // B keeps serving; 4 s later A answers a probe at its old pace.
    for (let i = 0; i < 10; i++) p.observe({ server: B, purpose: 'request', outcome: 'served', nowMs: START_MS + 3_200 + i * 100, ttfbMs: 90 });
    p.observe({ server: A, purpose: 'probe', outcome: 'served', nowMs: START_MS + 7_000, ttfbMs: 40 });
    const a = p.describe(START_MS + 7_000).find((view) => view.server === A);
    expect(a?.state).toBe('available');
    // Before, the two timeouts stayed in its distribution at the timeout (500 ms): estimate ~76 ms, and more after a shorter outage.
    expect(a?.ttfbEstimateMs).toBeLessThan(45);
    const attempts = p.plan({ logicalUrl: '/small', method: 'GET', candidates: [A, B], sizeBytes: 1_000, nowMs: START_MS + 7_010 });
    expect(attempts[0]?.server).toBe(A);
  });

  it('times a server out from its own distribution, not only from the floor', () => {
    const p = policy();
    for (let i = 0; i < 20; i++) p.observe({ server: A, purpose: 'request', outcome: 'served', nowMs: START_MS + i, ttfbMs: 900 + i });
    for (let i = 0; i < 20; i++) p.observe({ server: B, purpose: 'request', outcome: 'served', nowMs: START_MS + i, ttfbMs: 20 + i });
    const attempts = p.plan({ logicalUrl: '/x', method: 'GET', candidates: [A, B], nowMs: START_MS + 100 });
    const timeoutOf = (server: string): number => (attempts.find((a) => a.server === server) as PlannedAttempt).timeoutMs;
    expect(timeoutOf(B)).toBe(500); // 3 × p99 = 117 ms, raised to the floor
    expect(timeoutOf(A)).toBeGreaterThan(2_500); // 3 × 919 ms, above any fixed floor
    expect(timeoutOf(A)).toBeLessThanOrEqual(5_000);
  });

  it('with ejectAfterFailures 2, does not eject a server for one stall', () => {
    const p = policy(1, { ejectAfterFailures: 2 });
    const ejected: string[] = [];
    p.onServerFailed((server) => ejected.push(server));
    for (let i = 0; i < 10; i++) p.observe({ server: A, purpose: 'request', outcome: 'served', nowMs: START_MS + i, ttfbMs: 40 });
    p.observe({ server: A, purpose: 'request', outcome: 'timeout', nowMs: START_MS + 600 });
    p.observe({ server: A, purpose: 'request', outcome: 'served', nowMs: START_MS + 700, ttfbMs: 40 });
    p.observe({ server: A, purpose: 'request', outcome: 'timeout', nowMs: START_MS + 1_300 });
    expect(ejected).toEqual([]);
    expect(p.describe(START_MS + 1_300)[0]?.state).toBe('available');
  });
});
