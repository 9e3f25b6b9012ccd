/**
 * The cooperative cache's pure parts (origin/src/cache/cluster/): rendezvous ownership
 * under membership change, approximated global counts (GOS Section 4.3) with aging, the
 * replay guard of state-changing peer calls, and the invalidation log that refuses copies
 * read before an invalidation.
 */
import { describe, expect, it } from 'vitest';
import { homeOf, rankServers } from '../src/cache/cluster/rendezvous.js';
import { AccessCounts } from '../src/cache/cluster/access-counts.js';
import { Membership } from '../src/cache/cluster/membership.js';
import { newNonce, ReplayGuard } from '../src/cache/cluster/replay-guard.js';
import { InvalidationLog } from '../src/cache/cluster/invalidation-log.js';
import { HotThreshold, topShareCount } from '../src/cache/cluster/hot-threshold.js';

const A = 'http://a.localhost:8081';
const B = 'http://b.localhost:8082';
const C = 'http://c.localhost:8083';
const D = 'http://d.localhost:8084';
const paths = Array.from({ length: 3000 }, (_, index) => `/objects/${index}.html`);

describe('rendezvous ownership', () => {
  it('spreads homes evenly and agrees whatever the order servers are listed in', () => {
    const homes = new Map<string, number>();
    for (const path of paths) {
      const home = homeOf(path, [A, B, C]);
      expect(homeOf(path, [C, A, B])).toBe(home);
      expect(rankServers(path, [B, C, A], 1)[0]).toBe(home);
      homes.set(home ?? '', (homes.get(home ?? '') ?? 0) + 1);
    }
    for (const server of [A, B, C]) expect(homes.get(server)).toBeGreaterThan(850); // 1000 expected each
  });

  it('moves only the leaving server’s objects when it leaves, and only the joiner’s when one joins', () => {
    let movedOnLeave = 0;
    let movedOnJoin = 0;
    for (const path of paths) {
      const before = homeOf(path, [A, B, C]);
      const afterLeave = homeOf(path, [A, B]);
      if (before !== C) expect(afterLeave).toBe(before);
      else movedOnLeave += 1;
      // The new home of C's objects is the runner-up of the ranking with C.
      if (before === C) expect(afterLeave).toBe(rankServers(path, [A, B, C])[1]);
      const afterJoin = homeOf(path, [A, B, C, D]);
      if (afterJoin !== before) {
        expect(afterJoin).toBe(D);
        movedOnJoin += 1;
      }
    }
    expect(movedOnLeave).toBeGreaterThan(850);
    expect(movedOnJoin).toBeGreaterThan(600); // about a quarter of 3000
    expect(movedOnJoin).toBeLessThan(900);
  });

  it('ranks the k servers that keep a hot object, the home first', () => {
    for (const path of paths.slice(0, 50)) {
      const ranked = rankServers(path, [A, B, C], 2);
      expect(ranked).toHaveLength(2);
      expect(ranked[0]).toBe(homeOf(path, [A, B, C]));
      expect(new Set(ranked).size).toBe(2);
    }
  });

  it('rehomes a dead peer’s objects when a call to it fails, and gives them back when it answers', () => {
    let nowMs = 0;
    const membership = new Membership({ self: A, peers: [B, C], downForMs: 5_000, now: () => nowMs });
    const ofC = paths.filter((path) => membership.homeOf(path) === C);
    expect(ofC.length).toBeGreaterThan(0);
    membership.markDown(C);
    expect(membership.liveServers()).toEqual([A, B]);
    for (const path of ofC) expect([A, B]).toContain(membership.homeOf(path));
    membership.markUp(C);
    for (const path of ofC) expect(membership.homeOf(path)).toBe(C);
    membership.markDown(C);
    nowMs = 5_001; // tried again after downForMs
    expect(membership.isLive(C)).toBe(true);
  });
});

describe('approximated global access counts (GOS 4.3)', () => {
  it('reports local hits to the home at the threshold; the home adds them and feeds the AGAC back', () => {
    const atA = new AccessCounts({ self: A, reportThreshold: 3, agingIntervalMs: 0, maxObjects: 100 });
    const atB = new AccessCounts({ self: B, reportThreshold: 3, agingIntervalMs: 0, maxObjects: 100 });
    // B is home of /x; B itself has seen it 10 times.
    for (let hit = 0; hit < 10; hit += 1) atB.hit('/x', B);
    expect(atB.hit('/x', B)).toBe(false);
    expect(atA.hit('/x', B)).toBe(false);
    expect(atA.hit('/x', B)).toBe(false);
    expect(atA.hit('/x', B)).toBe(true); // threshold: report now
    expect(atA.countOf('/x')).toBe(3); // A knows only its own hits so far
    atA.setHolds('/x', true, B);
    const reports = atA.takeReports(() => B, '/x');
    expect(reports.get(B)).toEqual([['/x', 3, true]]);
    const feedback = atB.receiveReport(A, reports.get(B) ?? []);
    expect(feedback).toEqual([['/x', 14]]);
    atA.applyFeedback(feedback);
    expect(atA.countOf('/x')).toBe(14);
    expect(atB.holdersOf('/x')).toEqual([A]);
    // The LAC was cleared: nothing more to report until new hits.
    expect(atA.takeReports(() => B).size).toBe(0);
    atA.hit('/x', B);
    expect(atA.countOf('/x')).toBe(15);
  });

  it('halves the counts at the end of each aging interval (LFU-Aging)', () => {
    let nowMs = 0;
    const counts = new AccessCounts({ self: A, reportThreshold: 100, agingIntervalMs: 1_000, maxObjects: 100, now: () => nowMs });
    for (let hit = 0; hit < 40; hit += 1) counts.hit('/hot', A);
    expect(counts.countOf('/hot')).toBe(40);
    nowMs = 1_000;
    expect(counts.countOf('/hot')).toBe(20);
    nowMs = 3_500; // two more intervals
    expect(counts.countOf('/hot')).toBe(5);
  });

  it('keeps undelivered reports for the next round, and brings counts home when the home changes to itself', () => {
    const counts = new AccessCounts({ self: A, reportThreshold: 100, agingIntervalMs: 0, maxObjects: 100 });
    counts.hit('/y', C);
    counts.hit('/y', C);
    const report = counts.takeReports(() => C).get(C) ?? [];
    expect(report).toEqual([['/y', 2, false]]);
    counts.restoreReport(report); // C did not answer
    counts.takeReports(() => A); // C is gone: A is the home now
    expect(counts.countOf('/y')).toBe(2);
    expect(counts.hit('/y', A)).toBe(false);
    expect(counts.countOf('/y')).toBe(3);
  });

  it('stays within its bound, dropping the least counted objects first', () => {
    const counts = new AccessCounts({ self: A, reportThreshold: 1000, agingIntervalMs: 0, maxObjects: 50 });
    for (let hit = 0; hit < 5; hit += 1) counts.hit('/popular', A);
    for (let index = 0; index < 500; index += 1) counts.hit(`/once/${index}`, A);
    expect(counts.trackedObjects).toBeLessThanOrEqual(50);
    expect(counts.countOf('/popular')).toBe(5);
  });
});

describe('replay guard', () => {
  it('accepts a nonce once, refuses malformed and stale ones, and stays bounded', () => {
    let nowMs = 1_000_000;
    const guard = new ReplayGuard(60_000, 3, () => nowMs);
    const first = newNonce(nowMs);
    expect(guard.accept(first)).toBe(true);
    expect(guard.accept(first)).toBe(false);
    expect(guard.accept(undefined)).toBe(false);
    expect(guard.accept('123.abc')).toBe(false);
    expect(guard.accept(newNonce(nowMs - 61_000))).toBe(false);
    for (let index = 0; index < 5; index += 1) expect(guard.accept(newNonce(nowMs + index))).toBe(true);
    // The first nonce was forgotten early (bound 3): it is below the floor, so still refused.
    expect(guard.accept(first)).toBe(false);
    nowMs += 120_000;
    expect(guard.accept(newNonce(nowMs))).toBe(true);
  });
});

describe('invalidation log', () => {
  it('refuses a copy read at or before an invalidation of its path or of a prefix, and old copies', () => {
    let nowMs = 10_000;
    const log = new InvalidationLog(5_000, 100, () => nowMs);
    expect(log.isCurrent('/a.html', 9_000)).toBe(true);
    log.record({ path: '/a.html' }, 9_500);
    expect(log.isCurrent('/a.html', 9_000)).toBe(false);
    expect(log.isCurrent('/a.html', 9_600)).toBe(true);
    log.record({ prefix: '/news/' }, 9_800);
    expect(log.isCurrent('/news/today.html', 9_700)).toBe(false);
    expect(log.isCurrent('/news/today.html', 9_900)).toBe(true);
    expect(log.isCurrent('/other.html', 9_700)).toBe(true);
    nowMs = 20_000;
    // Forgotten entries still refuse what they covered (a forgotten prefix, conservatively,
    // every path read before it); later copies are taken.
    expect(log.isCurrent('/a.html', 9_400)).toBe(false);
    expect(log.isCurrent('/news/today.html', 9_700)).toBe(false);
    expect(log.isCurrent('/other.html', 9_700)).toBe(false);
    expect(log.isCurrent('/a.html', 9_900)).toBe(true);
  });

  it('keeps taking a long-lived copy when nothing invalidated it (an API put, an answer fresh for an hour)', () => {
    let nowMs = 1_000_000;
    const log = new InvalidationLog(300_000, 10_000, () => nowMs);
    const readAtMs = nowMs;
    log.record({ path: '/other.html' });
    nowMs += 3_600_000;
    log.record({ path: '/another.html' });
    expect(log.isCurrent('/promo', readAtMs)).toBe(true);
  });

  it('dates a late invalidation by its issue, refusing copies read before its arrival only for the grace', () => {
    let nowMs = 50_000;
    const log = new InvalidationLog(300_000, 10_000, () => nowMs, 1_000);
    // Issued at 10 000, arrives at 50 000 (the peer was frozen); new content was read at 20 000.
    log.record({ path: '/promo' }, 10_000);
    expect(log.isCurrent('/promo', 9_000)).toBe(false);
    expect(log.isCurrent('/promo', 20_000)).toBe(false); // within the grace: could be in flight from a clock behind
    nowMs += 1_001;
    expect(log.isCurrent('/promo', 20_000)).toBe(true);
    expect(log.isCurrent('/promo', 10_000)).toBe(false);
  });
});

describe('hot threshold (relative: the top share of the global counts)', () => {
  it('is the count at rank ⌊share × n⌋, so it follows the head of the distribution whatever the request rate', () => {
    const zipf = Array.from({ length: 100 }, (_, rank) => Math.round(1000 / (rank + 1)));
    expect(topShareCount([...zipf], 0.1)).toBe(100); // rank 10
    // Ten times the traffic: the same objects are hot.
    expect(topShareCount(zipf.map((count) => count * 10), 0.1)).toBe(1000);
    // Fewer objects than one share: nothing is hot.
    expect(topShareCount([50, 40, 30], 0.1)).toBe(Number.POSITIVE_INFINITY);
  });

  it('never falls below the minimum count, and is recomputed when the clock moves or the table grows by a tenth', () => {
    const clock = { nowMs: 0 };
    const threshold = new HotThreshold({ share: 0.5, minCount: 2, recomputeMs: 1000, now: () => clock.nowMs });
    let counts = [1, 1, 1, 1];
    expect(threshold.current(counts.length, () => counts)).toBe(2); // all seen once: the floor
    counts = [9, 8, 1, 1];
    expect(threshold.current(counts.length, () => counts)).toBe(2); // same table, same second: kept
    clock.nowMs = 1000;
    expect(threshold.current(counts.length, () => counts)).toBe(8);
    counts = [9, 8, 7, 6, 5, 1];
    expect(threshold.current(counts.length, () => counts)).toBe(7); // grew by more than a tenth
  });
});
