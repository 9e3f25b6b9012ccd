import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { StateReporter } from '../src/state-reporter.js';
import type { WebppEvent } from '../src/messages.js';

const event = (atMs: number): WebppEvent => ({ type: 'internal-error', atMs, message: 'x', url: `https://a.example/${atMs}` });

describe('StateReporter: live events only while a page subscribed', () => {
  let nowMs = 0;
  beforeEach(() => {
    vi.useFakeTimers();
    nowMs = 10_000;
  });
  afterEach(() => void vi.useRealTimers());

  it('posts nothing without a subscriber, yet keeps the events for snapshots', () => {
    const posted: WebppEvent[][] = [];
    const reporter = new StateReporter({ historySize: 10, publish: (batch) => void posted.push(batch), onlyWhenSubscribed: true, now: () => nowMs });
    for (let i = 0; i < 5; i++) reporter.event(event(i));
    vi.runAllTimers();
    expect(posted).toEqual([]);
    expect(reporter.listening).toBe(false);
    expect(reporter.recentEvents()).toHaveLength(5);
  });

  it('a subscription gets the last two seconds of events, then every event in batches, until its lease ends', () => {
    const posted: WebppEvent[][] = [];
    const reporter = new StateReporter({ historySize: 10, publish: (batch) => void posted.push(batch), onlyWhenSubscribed: true, now: () => nowMs });
    reporter.event(event(1)); // more than 2 s before the subscription: not replayed
    nowMs += 2_500;
    reporter.event(event(2));
    reporter.subscribe(60_000);
    expect(reporter.listening).toBe(true);
    vi.runAllTimers();
    expect(posted).toEqual([[event(2)]]);
    reporter.event(event(3));
    reporter.event(event(4));
    vi.runAllTimers();
    expect(posted[1]).toEqual([event(3), event(4)]);
    nowMs += 60_001;
    reporter.event(event(5));
    vi.runAllTimers();
    expect(posted).toHaveLength(2);
  });

  it("a caller's own publish gets every event", () => {
    const posted: WebppEvent[] = [];
    const reporter = new StateReporter({ historySize: 10, publish: (batch) => void posted.push(...batch) });
    reporter.event(event(1));
    vi.runAllTimers();
    expect(posted).toEqual([event(1)]);
  });
});
