/**
 * The pushed service time (core's push/service-time.ts, used by the origin and the simulator): Fei et al.'s interval smoothing and the
 * ARPANET threshold-and-decay rule. A fake clock drives the intervals.
 */
import { describe, expect, it } from 'vitest';
import { ServiceTimePush, type ServiceTimePushOptions } from '@webpp/core';

const PAPER_LIKE: ServiceTimePushOptions = { intervalMs: 1_000, smoothing: 0.9, threshold: 0.1, thresholdDecay: 0.02, floorMs: 1 };

/** Feeds `perInterval(i)` samples each interval for `intervals` intervals; returns the pushed value at each interval's end. */
function run(push: ServiceTimePush, intervals: number, perInterval: (interval: number) => number[], startMs = 0, unloaded = false): number[] {
  const pushed: number[] = [];
  for (let interval = 0; interval < intervals; interval += 1) {
    const samples = perInterval(interval);
    samples.forEach((sample, index) => push.record(sample, startMs + interval * 1_000 + (index * 900) / samples.length, unloaded));
    pushed.push(push.current(startMs + (interval + 1) * 1_000)?.serviceMs ?? Number.NaN);
  }
  return pushed;
}

describe('ServiceTimePush (Fei et al. 1998, Section 4 and footnote 3)', () => {
  it('pushes nothing before the first request, and the first sample at once', () => {
    const push = new ServiceTimePush(PAPER_LIKE);
    expect(push.current(0)).toBeUndefined();
    push.record(12, 5);
    expect(push.current(5)).toEqual({ serviceMs: 12, atMs: 5 });
  });

  it('moves in steps: noise within the threshold is not pushed, while the smoothed value moves every interval', () => {
    const push = new ServiceTimePush(PAPER_LIKE);
    // 10 ms ± 3 %: every interval's average differs, none by 10 %.
    const noise = [1.0, 1.03, 0.97, 1.02, 0.98, 1.01, 0.99, 1.03, 0.97, 1.0];
    const smoothed: number[] = [];
    const pushed = run(push, 50, (i) => {
      if (i > 0) smoothed.push(push.smoothed(i * 1_000) ?? 0);
      return [10 * (noise[i % noise.length] ?? 1)];
    });
    const changesOfPushed = pushed.filter((value, i) => i > 0 && value !== pushed[i - 1]).length;
    const changesOfSmoothed = smoothed.filter((value, i) => i > 0 && value !== smoothed[i - 1]).length;
    expect(changesOfSmoothed).toBeGreaterThan(40);
    // Re-pushed only when the threshold has decayed to 0: every T/R = 5 intervals.
    expect(changesOfPushed).toBeLessThanOrEqual(50 / 5);
    expect(changesOfPushed).toBeGreaterThanOrEqual(50 / 5 - 2);
    for (const value of pushed) {
      expect(value).toBeGreaterThan(9.5);
      expect(value).toBeLessThan(10.5);
    }
  });

  it('pushes a change of at least T at the end of the interval it shows in', () => {
    const push = new ServiceTimePush(PAPER_LIKE);
    run(push, 10, () => [10, 10, 10]);
    expect(push.current(10_000)?.serviceMs).toBeCloseTo(10, 5);
    // The load triples during interval 10.
    run(push, 1, () => [30, 30, 30], 10_000);
    const after = push.current(11_000);
    expect(after?.atMs).toBe(11_000);
    // P = 0.9 · 30 + 0.1 · 10 (footnote 3).
    expect(after?.serviceMs).toBeCloseTo(28, 5);
  });

  it('re-pushes at least every T/R intervals even when nothing changes enough', () => {
    const push = new ServiceTimePush(PAPER_LIKE);
    run(push, 40, () => [20]);
    const pushTimes: number[] = [];
    let last = push.current(40_000)?.atMs;
    for (let interval = 40; interval < 80; interval += 1) {
      push.record(20, interval * 1_000 + 500);
      const atMs = push.current((interval + 1) * 1_000)?.atMs;
      if (atMs !== last) pushTimes.push(atMs ?? 0);
      last = atMs;
    }
    const gaps = pushTimes.slice(1).map((atMs, i) => atMs - (pushTimes[i] ?? 0));
    expect(gaps.length).toBeGreaterThan(5);
    for (const gapMs of gaps) expect(gapMs).toBe(5_000);
  });

  it('a smaller threshold decay means rarer forced re-pushes (T/R·I)', () => {
    const rare = new ServiceTimePush({ ...PAPER_LIKE, thresholdDecay: 0.01 });
    const pushesBefore = rare.pushes;
    run(rare, 40, () => [20]);
    // First sample, then one re-push per T/R = 10 intervals.
    expect(rare.pushes - pushesBefore).toBe(1 + 4);
  });

  it('an idle server falls back to its unloaded service time instead of keeping its loaded value', () => {
    const push = new ServiceTimePush(PAPER_LIKE);
    run(push, 5, () => [4], 0, true); // requests that met an idle server: 4 ms
    run(push, 10, () => [200, 220, 240], 5_000); // a queue builds up
    expect(push.current(15_000)?.serviceMs).toBeGreaterThan(150);
    // Everyone leaves: no request for 5 s.
    expect(push.current(20_000)?.serviceMs).toBeLessThan(10);
  });

  it('ignores samples that are not durations, and survives a long idle spell', () => {
    const push = new ServiceTimePush(PAPER_LIKE);
    push.record(Number.NaN, 0);
    push.record(-1, 0);
    expect(push.current(0)).toBeUndefined();
    push.record(7, 0, true);
    expect(push.current(30 * 24 * 3_600_000)?.serviceMs).toBeCloseTo(7, 5);
  });

  it('rejects parameters outside their ranges', () => {
    expect(() => new ServiceTimePush({ ...PAPER_LIKE, intervalMs: 0 })).toThrow(RangeError);
    expect(() => new ServiceTimePush({ ...PAPER_LIKE, smoothing: 0 })).toThrow(RangeError);
    expect(() => new ServiceTimePush({ ...PAPER_LIKE, thresholdDecay: 0 })).toThrow(RangeError);
  });
});
