import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  FAST_PRESET,
  LatencyTable,
  dueProbes,
  rankReplicas,
  refreshTarget,
  resolveSelectionConfig,
  selectReplica,
} from '@webpp/core';
import { FakeClock, seededRandom } from './fake-clock.js';

const A = 'http://a.localhost:8081';
const B = 'http://b.localhost:8082';
const C = 'http://c.localhost:8083';
const SERVERS = [A, B, C];
const CONFIG = resolveSelectionConfig({ ttlMs: 10_000, probeIntervalMs: 1_000, maxProbeIntervalMs: 8_000 }, FAST_PRESET);

function setup() {
  const clock = new FakeClock();
  return { clock, table: new LatencyTable(CONFIG, clock.now) };
}

describe('rankReplicas / selectReplica (Figure 4)', () => {
  it('chooses at random while every entry is expired', () => {
    const { table } = setup();
    const firstChoices = new Map<string, number>();
    const random = seededRandom(42);
    for (let i = 0; i < 3000; i++) {
      const attempt = selectReplica(SERVERS, table, random)!;
      expect(attempt.reason).toBe('random-all-expired');
      expect(attempt.timeoutMs).toBe(CONFIG.initialTimeoutMs);
      firstChoices.set(attempt.server, (firstChoices.get(attempt.server) ?? 0) + 1);
    }
    // Each of the 3 servers is chosen about a third of the time (deterministic seed).
    for (const server of SERVERS) expect(firstChoices.get(server)).toBeGreaterThan(850);
  });

  it('is deterministic for a given random source', () => {
    const { table } = setup();
    // Fisher–Yates with random() = 0: [A,B,C] → swap(2,0) [C,B,A] → swap(1,0) [B,C,A]
    expect(rankReplicas(SERVERS, table, () => 0).map((a) => a.server)).toEqual([B, C, A]);
    // random() just below 1 never swaps
    expect(rankReplicas(SERVERS, table, () => 0.999999).map((a) => a.server)).toEqual(SERVERS);
  });

  it('orders by ascending S-percentile once any entry is fresh', () => {
    const { table, clock } = setup();
    table.recordSample(A, 80);
    table.recordSample(B, 20);
    table.recordSample(C, 50);
    const ranked = rankReplicas(SERVERS, table, () => 0);
    expect(ranked.map((a) => a.server)).toEqual([B, C, A]);
    expect(ranked.every((a) => a.reason === 'lowest-percentile')).toBe(true);

    // B and C expire; A stays fresh: ranking still uses every (stale) estimate.
    clock.advance(CONFIG.ttlMs - 1);
    table.recordSample(A, 80);
    clock.advance(2);
    expect(table.isExpired(B)).toBe(true);
    expect(rankReplicas(SERVERS, table, () => 0).map((a) => a.server)).toEqual([B, C, A]);
  });

  it('ranks never-sampled servers after sampled ones, in the given order', () => {
    const { table } = setup();
    table.recordSample(C, 500);
    expect(rankReplicas([A, B, C], table, () => 0).map((a) => a.server)).toEqual([C, A, B]);
  });

  it('breaks ties by variance: similar means, steadier server first (S > 50)', () => {
    const { table } = setup();
    for (const sample of [100, 100, 100]) table.recordSample(A, sample);
    for (const sample of [60, 140, 100]) table.recordSample(B, sample);
    expect(table.get(A)?.meanMs).toBeCloseTo(table.get(B)!.meanMs, -1);
    expect(selectReplica([B, A], table)?.server).toBe(A);
  });

  it('fails over in order and keeps failed servers as a last resort', () => {
    const { table } = setup();
    table.recordSample(A, 10);
    table.recordSample(B, 20);
    table.recordSample(C, 30);
    table.markFailed(A);
    expect(rankReplicas(SERVERS, table).map((a) => [a.server, a.reason])).toEqual([
      [B, 'lowest-percentile'],
      [C, 'lowest-percentile'],
      [A, 'last-resort-failed'],
    ]);
    table.markFailed(B);
    expect(selectReplica(SERVERS, table)?.server).toBe(C);
    table.markFailed(C);
    // All failed: the one whose probe is due soonest (A, failed first) comes first.
    expect(rankReplicas(SERVERS, table).map((a) => a.reason)).toEqual(Array(3).fill('last-resort-failed'));
    expect(selectReplica(SERVERS, table)?.server).toBe(A);
  });

  it('dedupes candidates and handles none', () => {
    const { table } = setup();
    expect(rankReplicas([A, A, B], table)).toHaveLength(2);
    expect(selectReplica([], table)).toBeUndefined();
  });

  it('gives each attempt the timeout of its own server', () => {
    const { table } = setup();
    for (const sample of [10, 12]) table.recordSample(A, sample);
    for (const sample of [2000, 3000]) table.recordSample(B, sample);
    const timeouts = Object.fromEntries(rankReplicas([A, B], table).map((a) => [a.server, a.timeoutMs]));
    expect(timeouts).toEqual({ [A]: table.timeoutMs(A), [B]: table.timeoutMs(B) });
    expect(timeouts[A]).toBe(CONFIG.timeoutFloorMs);
    expect(timeouts[B]).toBeGreaterThan(2950);
  });
});

describe('refreshTarget', () => {
  it('names the available server with the oldest expired entry', () => {
    const { table, clock } = setup();
    table.recordSample(A, 10);
    clock.advance(1000);
    table.recordSample(B, 10);
    clock.advance(1000);
    table.recordSample(C, 10);
    expect(refreshTarget(table)).toBeUndefined();
    clock.advance(CONFIG.ttlMs - 500); // A and B expired, C fresh
    expect(refreshTarget(table)).toBe(A);
    table.markFailed(A);
    expect(refreshTarget(table)).toBe(B);
    expect(refreshTarget(table, [C])).toBeUndefined();
  });

  it('treats a never-sampled candidate as the oldest', () => {
    const { table } = setup();
    table.recordSample(A, 10);
    expect(refreshTarget(table, [A, B])).toBe(B);
  });
});

describe('dueProbes and backoff under a fake clock', () => {
  it('probes a failed server after F, 2F, 4F, ... and stops once it answers', () => {
    const { table, clock } = setup();
    table.recordSample(A, 10);
    table.markFailed(A);
    const probeTimes: number[] = [];
    const start = clock.nowMs;
    for (let step = 0; step < 30_000; step += 100) {
      clock.nowMs = start + step;
      for (const server of dueProbes(table)) {
        probeTimes.push(clock.nowMs - start);
        table.recordProbeSent(server);
      }
    }
    // F = 1 s doubling: probes at 1, 1+2, 3+4, 7+8, then capped at 8 s: 23
    expect(probeTimes).toEqual([1_000, 3_000, 7_000, 15_000, 23_000]);
    table.recordSample(A, 11);
    expect(dueProbes(table)).toEqual([]);
    expect(table.get(A)?.probeIntervalMs).toBe(CONFIG.probeIntervalMs);
  });

  it('lists due servers earliest first', () => {
    const { table, clock } = setup();
    table.markFailed(B);
    clock.advance(10);
    table.markFailed(A);
    expect(dueProbes(table)).toEqual([]);
    clock.advance(CONFIG.probeIntervalMs);
    expect(dueProbes(table)).toEqual([B, A]);
  });
});

describe('selection properties', () => {
  type Op =
    | { kind: 'sample'; server: number; latencyMs: number }
    | { kind: 'fail'; server: number }
    | { kind: 'probe' }
    | { kind: 'advance'; ms: number };
  const opArbitrary: fc.Arbitrary<Op> = fc.oneof(
    fc.record({ kind: fc.constant('sample' as const), server: fc.nat(3), latencyMs: fc.integer({ min: 0, max: 5000 }) }),
    fc.record({ kind: fc.constant('fail' as const), server: fc.nat(3) }),
    fc.record({ kind: fc.constant('probe' as const) }),
    fc.record({ kind: fc.constant('advance' as const), ms: fc.integer({ min: 0, max: 30_000 }) }),
  );
  const servers = [A, B, C, 'http://d.localhost:8084'];

  it('never ranks a failed server ahead of an available one; a failed server stays failed until it answers', () => {
    fc.assert(
      fc.property(fc.array(opArbitrary, { maxLength: 60 }), fc.subarray(servers, { minLength: 1 }), fc.nat(), (ops, candidates, seed) => {
        const clock = new FakeClock();
        const table = new LatencyTable(CONFIG, clock.now);
        const random = seededRandom(seed);
        const answeredSinceFailure = new Set<string>(servers);
        for (const op of ops) {
          if (op.kind === 'sample') {
            table.recordSample(servers[op.server]!, op.latencyMs);
            answeredSinceFailure.add(servers[op.server]!);
          } else if (op.kind === 'fail') {
            table.markFailed(servers[op.server]!);
            answeredSinceFailure.delete(servers[op.server]!);
          } else if (op.kind === 'probe') {
            for (const server of dueProbes(table)) table.recordProbeSent(server); // probes that get no answer
          } else {
            clock.advance(op.ms);
          }
          const ranked = rankReplicas(candidates, table, random);
          expect(new Set(ranked.map((a) => a.server))).toEqual(new Set(candidates));
          const failedFlags = ranked.map((a) => !answeredSinceFailure.has(a.server));
          // all available first, then all failed
          expect(failedFlags).toEqual([...failedFlags].sort((x, y) => Number(x) - Number(y)));
          for (const attempt of ranked) {
            expect(attempt.reason === 'last-resort-failed').toBe(!answeredSinceFailure.has(attempt.server));
            expect(attempt.timeoutMs).toBeGreaterThanOrEqual(CONFIG.timeoutFloorMs);
            expect(attempt.timeoutMs).toBeLessThanOrEqual(CONFIG.timeoutCeilingMs);
          }
        }
      }),
    );
  });

  it('among fresh available servers, picks one with the minimal S-percentile', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.nat(3), fc.integer({ min: 1, max: 5000 })), { minLength: 1, maxLength: 40 }), (samples) => {
        const table = new LatencyTable(CONFIG, new FakeClock().now);
        for (const [server, latencyMs] of samples) table.recordSample(servers[server]!, latencyMs);
        const chosen = selectReplica(servers, table)!;
        const best = Math.min(...servers.map((server) => table.sPercentileMs(server)));
        expect(table.sPercentileMs(chosen.server)).toBe(best);
      }),
    );
  });
});
