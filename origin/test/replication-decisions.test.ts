/**
 * The decisions of load-driven replication with a fake clock: the load table's sliding
 * window, Algorithm 1 (thresholds, pins, co-op choice, T_coop, limits, no flaps), when a
 * replica is taken back, the flap count, and peer liveness and the replay guard.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { LoadStats } from '../src/stats/load-stats.js';
import { LoadTable } from '../src/replication/load-table.js';
import { selectMigration, type MigrationInput, type CoopView } from '../src/replication/select-migration.js';
import { selectWithdrawal, type WithdrawalInput } from '../src/replication/select-withdrawal.js';
import { DecisionLog } from '../src/replication/decision-log.js';
import { eligibility } from '../src/replication/eligibility.js';
import { isPagePath } from '../src/html-pages.js';
import { ReplicationDirectory } from '../src/directory/replication-directory.js';
import type { ResolvedOptions } from '../src/options.js';
import { PeerState } from '../src/sync/peer-state.js';
import { encodeLoadRecord, decodeLoadRecord, type LoadRecord } from '../src/sync/load-record.js';

function fakeClock(startMs = 1_000_000): { now: () => number; advance: (ms: number) => void } {
  let nowMs = startMs;
  return { now: () => nowMs, advance: (ms) => (nowMs += ms) };
}

describe('load table', () => {
  function table(clock: ReturnType<typeof fakeClock>) {
    const stats = new LoadStats({ ewmaWeight: 0.1, rateHalfLifeMs: 60_000, maxResources: 100, clock: clock.now });
    return { stats, table: new LoadTable({ stats, windowMs: 60_000, buckets: 6, utilisation: () => 0.25, clock: clock.now }) };
  }

  it('counts hits and bytes per resource over the last window only', () => {
    const clock = fakeClock();
    const { stats, table: load } = table(clock);
    for (let i = 0; i < 10; i += 1) stats.record('/old.png', 1000, 1);
    for (let second = 0; second < 60; second += 10) {
      clock.advance(10_000);
      load.sample();
    }
    for (let i = 0; i < 30; i += 1) stats.record('/hot.js', 200, 1);
    stats.record('/cold.css', 50, 1);
    clock.advance(10_000);
    load.sample();
    // /old.png's 10 hits are more than a window old now.
    expect(load.resources().map(({ path, hits, bytes, sizeBytes }) => ({ path, hits, bytes, sizeBytes }))).toEqual([
      { path: '/hot.js', hits: 30, bytes: 6000, sizeBytes: 200 },
      { path: '/cold.css', hits: 1, bytes: 50, sizeBytes: 50 },
    ]);
    const totals = load.totals();
    expect(totals.hits).toBe(31);
    expect(totals.bytes).toBe(6050);
    expect(totals.spanMs).toBe(60_000);
    expect(totals.requestsPerSecond).toBeCloseTo(31 / 60, 6);
    expect(load.ownLoad(1)).toEqual({ requestsPerSecond: totals.requestsPerSecond, bytesPerSecond: totals.bytesPerSecond, utilisation: 0.25, hot: [{ path: '/hot.js', hits: 30, bytes: 6000, sizeBytes: 200 }] });
  });

  it('forgets everything once a whole window passes without requests', () => {
    const clock = fakeClock();
    const { stats, table: load } = table(clock);
    for (let i = 0; i < 5; i += 1) stats.record('/a.js', 10, 1);
    for (let step = 0; step < 8; step += 1) {
      clock.advance(10_000);
      load.sample();
    }
    expect(load.resources()).toEqual([]);
    expect(load.totals().hits).toBe(0);
  });

  it('reports no huge rate right after start', () => {
    const clock = fakeClock();
    const { stats, table: load } = table(clock);
    stats.record('/a.js', 10, 1);
    clock.advance(1);
    // One hit over at least one bucket (10 s), not over 1 ms.
    expect(load.totals().requestsPerSecond).toBeCloseTo(0.1, 6);
  });
});

const policy = { overloadRatio: 0.25, minLoad: 1, hitThreshold: 100, coopIntervalMs: 60_000, homeMs: 300_000, maxPerCoop: 100, maxBytesPerCoop: 1_000_000 };
const coop = (server: string, load: number, extra: Partial<CoopView> = {}): CoopView => ({ server, load, automaticCount: 0, automaticBytes: 0, lastAcceptedAtMs: 0, maxReplicaBytes: 50 * 1024 * 1024, ...extra });
const row = (path: string, hits: number, sizeBytes = 1000) => ({ path, hits, bytes: hits * sizeBytes, sizeBytes, requestsPerSecond: hits / 60 });
const HOME = 'http://a.localhost:1';
const B = 'http://b.localhost:2';
const C = 'http://c.localhost:3';

function migration(overrides: Partial<MigrationInput> = {}): MigrationInput {
  return {
    nowMs: 10_000_000,
    selfLoad: 30,
    peers: [coop(B, 5), coop(C, 2)],
    resources: [row('/index.html', 900), row('/big.png', 400), row('/app.js', 300), row('/style.css', 40)],
    policy,
    eligible: (path) => !isPagePath(path),
    holders: () => new Set([HOME]),
    lastRemovedAtMs: () => undefined,
    ...overrides,
  };
}

describe('Algorithm 1: what to replicate and where', () => {
  it('places the hottest eligible resource on the least-loaded peer, never a page', () => {
    const decision = selectMigration(migration());
    expect(decision).toMatchObject({ kind: 'place', path: '/big.png', coop: C, hits: 400, threshold: 100 });
  });

  it('places nothing while the load is within the ratio of the cluster mean, or below the minimum', () => {
    // mean of 12, 10, 8 is 10; 12 ≤ 1.25 × 10.
    expect(selectMigration(migration({ selfLoad: 12, peers: [coop(B, 10), coop(C, 8)] })).kind).toBe('none');
    expect(selectMigration(migration({ selfLoad: 0.5, peers: [coop(B, 0), coop(C, 0)] })).kind).toBe('none');
    expect(selectMigration(migration({ peers: [] })).kind).toBe('none');
  });

  it('lowers T until something qualifies', () => {
    const decision = selectMigration(migration({ resources: [row('/a.js', 30), row('/b.js', 12), row('/index.html', 900)] }));
    // 100 → 50 → 25: /a.js qualifies at T = 25.
    expect(decision).toMatchObject({ kind: 'place', path: '/a.js', threshold: 25 });
  });

  it('prefers a resource with fewer replicas among those above T', () => {
    const holders = (path: string) => new Set(path === '/big.png' ? [HOME, B] : [HOME]);
    expect(selectMigration(migration({ holders }))).toMatchObject({ path: '/app.js', coop: C });
  });

  it('skips co-ops within T_coop, at their limits, or as loaded as this server', () => {
    const nowMs = 10_000_000;
    expect(selectMigration(migration({ peers: [coop(B, 5), coop(C, 2, { lastAcceptedAtMs: nowMs - 59_000 })] }))).toMatchObject({ coop: B });
    expect(selectMigration(migration({ peers: [coop(B, 5), coop(C, 2, { lastAcceptedAtMs: nowMs - 60_000 })] }))).toMatchObject({ coop: C });
    expect(selectMigration(migration({ peers: [coop(B, 5), coop(C, 2, { automaticCount: 100 })] }))).toMatchObject({ coop: B });
    expect(selectMigration(migration({ peers: [coop(B, 5, { automaticBytes: 999_500 }), coop(C, 2, { automaticBytes: 1_000_000 })] }))).toMatchObject({ kind: 'none' });
    expect(selectMigration(migration({ selfLoad: 30, peers: [coop(B, 31), coop(C, 30)] })).kind).toBe('none');
  });

  it('places a resource only on a co-op that stores replicas that large', () => {
    // /big.png (1000 bytes, the hottest) does not fit C (900): C gets /app.js, and B, which may store it, /big.png.
    expect(selectMigration(migration({ peers: [coop(B, 5), coop(C, 2, { maxReplicaBytes: 900 })], resources: [row('/big.png', 400), row('/app.js', 300, 800)] }))).toMatchObject({ path: '/app.js', coop: C });
    expect(selectMigration(migration({ peers: [coop(B, 5), coop(C, 2, { maxReplicaBytes: 900 })], resources: [row('/big.png', 400)] }))).toMatchObject({ path: '/big.png', coop: B });
  });

  it('does not place a resource again on a co-op that gave it back within T_home', () => {
    const nowMs = 10_000_000;
    const removedFromC = (path: string, server: string) => (path === '/big.png' && server === C ? nowMs - 299_999 : undefined);
    expect(selectMigration(migration({ lastRemovedAtMs: removedFromC }))).toMatchObject({ path: '/app.js', coop: C });
    const longAgo = (path: string, server: string) => (path === '/big.png' && server === C ? nowMs - 300_000 : undefined);
    expect(selectMigration(migration({ lastRemovedAtMs: longAgo }))).toMatchObject({ path: '/big.png', coop: C });
  });
});

describe('withdrawal', () => {
  const placed = { logical: `${HOME}/big.png`, path: '/big.png', coop: C, placedAtMs: 1_000_000 };
  function withdrawal(overrides: Partial<WithdrawalInput> = {}): WithdrawalInput {
    return { nowMs: 1_300_000, selfLoad: 10, mean: 10, overloadRatio: 0.25, homeMs: 300_000, coopLoads: new Map([[C, 10]]), placed: [placed], carried: () => 5, ...overrides };
  }

  it('never before T_home', () => {
    expect(selectWithdrawal(withdrawal({ nowMs: 1_299_999, coopLoads: new Map([[C, 100]]) }))).toEqual({ kind: 'none' });
  });

  it('when the co-op became loaded', () => {
    expect(selectWithdrawal(withdrawal({ coopLoads: new Map([[C, 12.6]]) }))).toMatchObject({ kind: 'withdraw', replica: placed });
  });

  it('when this server stays at or below the mean with the carried load back, and not before', () => {
    expect(selectWithdrawal(withdrawal({ selfLoad: 4, carried: () => 6 }))).toMatchObject({ kind: 'withdraw' });
    expect(selectWithdrawal(withdrawal({ selfLoad: 4.1, carried: () => 6 }))).toEqual({ kind: 'none' });
  });

  it('keeps a replica whose co-op sent no fresh figures (recall handles dead co-ops)', () => {
    expect(selectWithdrawal(withdrawal({ coopLoads: new Map(), selfLoad: 0 }))).toEqual({ kind: 'none' });
  });
});

describe('flap count', () => {
  it('counts a placement again on the same co-op within T_home of the first', () => {
    const log = new DecisionLog(300_000);
    log.add({ atMs: 0, kind: 'place', logical: 'L', coop: C, reason: '' });
    log.add({ atMs: 100_000, kind: 'recall', logical: 'L', coop: C, reason: '' });
    log.add({ atMs: 200_000, kind: 'place', logical: 'L', coop: B, reason: '' });
    expect(log.flaps).toBe(0);
    log.add({ atMs: 299_999, kind: 'place', logical: 'L', coop: C, reason: '' });
    expect(log.flaps).toBe(1);
    expect(log.counts).toEqual({ place: 3, withdraw: 0, recall: 1 });
    log.add({ atMs: 700_000, kind: 'withdraw', logical: 'L', coop: C, reason: '' });
    log.add({ atMs: 1_000_000, kind: 'place', logical: 'L', coop: C, reason: '' });
    expect(log.flaps).toBe(1);
    expect(log.lastRemovedAtMs('L', C)).toBeUndefined();
  });
});

describe('peer state', () => {
  const record = (server: string, atMs: number, extra: Partial<LoadRecord> = {}): string =>
    encodeLoadRecord({ server, atMs, requestsPerSecond: 1, bytesPerSecond: 2, utilisation: 0.5, hot: [], fields: {}, ...extra });

  function state(clock = fakeClock()) {
    return new PeerState({ self: HOME, peers: [B, C], ownLoad: () => ({ requestsPerSecond: 3, bytesPerSecond: 4, utilisation: 0.1, hot: [] }), missedPingsForDown: 3, maxClockSkewMs: 60_000, clock: clock.now });
  }

  it('declares a peer down after the configured misses, once, and up when heard again', () => {
    const peers = state();
    const events: string[] = [];
    peers.onPeerDown((peer) => events.push(`down ${peer}`));
    peers.onPeerUp((peer) => events.push(`up ${peer}`));
    peers.missedPing(C);
    peers.missedPing(C);
    expect(peers.livePeers()).toEqual([B, C]);
    peers.missedPing(C);
    peers.missedPing(C);
    expect(peers.livePeers()).toEqual([B]);
    peers.heard(C);
    expect(events).toEqual([`down ${C}`, `up ${C}`]);
  });

  it('keeps only newer records from known peers, within the clock skew', () => {
    const clock = fakeClock();
    const peers = state(clock);
    expect(peers.receive(record(B, clock.now()))).toBeDefined();
    expect(peers.receive(record(B, clock.now()))).toBeUndefined(); // replay
    expect(peers.receive(record('http://stranger.localhost:9', clock.now()))).toBeUndefined();
    expect(peers.receive(record(C, clock.now() + 60_001))).toBeUndefined();
    expect(peers.receive(record(C, clock.now()), B)).toBeUndefined(); // an answer from B must be B's
    expect(peers.receive('not-base64!')).toBeUndefined();
    expect(peers.recordsRejected).toBe(5);
  });

  it('sends its extra fields, and each record is newer than the last', () => {
    const peers = state();
    peers.registerField('serviceMs', () => 12);
    peers.registerField('skipped', () => undefined);
    expect(() => peers.registerField('serviceMs', () => 1)).toThrow(TypeError);
    expect(() => peers.registerField('bad name', () => 1)).toThrow(TypeError);
    const first = decodeLoadRecord(peers.outgoingHeaders()['webpp-peer-state']);
    const second = peers.ownRecord();
    expect(first).toMatchObject({ server: HOME, requestsPerSecond: 3, fields: { serviceMs: 12 } });
    expect(second.atMs).toBeGreaterThan(first?.atMs ?? Infinity);
  });

  it('drops cold resources to keep a record within the header budget', () => {
    const hot = Array.from({ length: 64 }, (_, index) => ({ path: `/${'x'.repeat(200)}/${index}`, hits: 64 - index, bytes: 1, sizeBytes: 1 }));
    const decoded = decodeLoadRecord(record(B, 1, { hot }));
    expect(decoded?.hot.length).toBeGreaterThan(0);
    expect(decoded?.hot.length).toBeLessThan(64);
    expect(decoded?.hot[0]?.hits).toBe(64);
  });
});

describe('eligibility (operator control and Algorithm 1 step 2)', () => {
  const base = { publicUrl: HOME, logicalOrigin: HOME, scriptPath: '/webpp.js', workerPath: '/webpp-sw.js', autoReplicatePinPages: true };
  const rules = (overrides: Partial<ResolvedOptions> = {}, directory = new ReplicationDirectory()) =>
    eligibility({ ...base, autoReplicatePrefixes: ['/'], autoReplicatePinned: ['/'], ...overrides }, directory);

  it('keeps pages, pinned paths, client scripts and paths outside the prefixes home', () => {
    const only = rules({ autoReplicatePrefixes: ['/img/', '/js/'], autoReplicatePinned: ['/', '/js/entry.js', '/img/logo/*'] });
    expect(['/img/a.png', '/js/app.js'].filter((path) => only.eligible(path))).toEqual(['/img/a.png', '/js/app.js']);
    for (const path of ['/', '/img/', '/img/page.html', '/img/about', '/js/entry.js', '/img/logo/big.png', '/css/site.css', '/webpp.js']) {
      expect(only.eligible(path), path).toBe(false);
    }
    expect(rules({ autoReplicatePinPages: false }).eligible('/about.html')).toBe(true);
  });

  it('touches nothing on a server that is not the home, nor resources under a prefix entry or held for another logical URL', () => {
    expect(rules({ logicalOrigin: B }).isHome).toBe(false);
    expect(rules({ logicalOrigin: B }).eligible('/img/a.png')).toBe(false);
    const directory = new ReplicationDirectory();
    directory.addReplica(`${HOME}/img/*`, `${B}/img/*`);
    directory.addReplica(`${B}/shared.js`, `${HOME}/shared.js`);
    const withEntries = rules({}, directory);
    expect(withEntries.eligible('/img/a.png')).toBe(false);
    expect(withEntries.eligible('/shared.js')).toBe(false);
    expect(withEntries.eligible('/own.js')).toBe(true);
  });
});

describe('load records from the wire', () => {
  it('decode to a valid record or to nothing, never throw, whatever the header holds', () => {
    const anyValue = fc.oneof(fc.jsonValue(), fc.record({ server: fc.constantFrom(B, 'javascript:1', ''), atMs: fc.oneof(fc.double(), fc.integer()), requestsPerSecond: fc.double(), bytesPerSecond: fc.double(), utilisation: fc.double(), hot: fc.array(fc.jsonValue(), { maxLength: 70 }), fields: fc.dictionary(fc.string(), fc.jsonValue()) }));
    const header = fc.oneof(
      anyValue.map((value) => Buffer.from(JSON.stringify(value) ?? 'null').toString('base64url')),
      fc.string({ maxLength: 300 }),
      fc.constant('A'.repeat(9000)),
    );
    fc.assert(
      fc.property(header, (value) => {
        const record = decodeLoadRecord(value);
        if (record === undefined) return;
        expect(record.server.startsWith('http')).toBe(true);
        expect(record.utilisation).toBeLessThanOrEqual(1);
        for (const figure of [record.atMs, record.requestsPerSecond, record.bytesPerSecond, ...record.hot.flatMap((row) => [row.hits, row.bytes, row.sizeBytes])]) {
          expect(Number.isFinite(figure) && figure >= 0).toBe(true);
        }
      }),
      { seed: 20_261_124, numRuns: 500 },
    );
  });
});
