import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { timerQueue } from '../src/timer-queue.js';

describe('timerQueue: the engine timers on one native timer', () => {
  beforeEach(() => void vi.useFakeTimers());
  afterEach(() => void vi.useRealTimers());

  it('runs each timer at its time, in order, and never a cancelled one', () => {
    const setTimer = timerQueue({ now: Date.now });
    const ran: string[] = [];
    setTimer(30, () => ran.push('30'));
    const cancel = setTimer(10, () => ran.push('10'));
    setTimer(20, () => ran.push('20a'));
    setTimer(20, () => ran.push('20b'));
    cancel();
    vi.advanceTimersByTime(19);
    expect(ran).toEqual([]);
    vi.advanceTimersByTime(1);
    expect(ran).toEqual(['20a', '20b']);
    vi.advanceTimersByTime(10);
    expect(ran).toEqual(['20a', '20b', '30']);
  });

  it('arms one native timer for a burst of timeouts, and none once all are cancelled', () => {
    const setTimer = timerQueue({ now: Date.now });
    const cancels = Array.from({ length: 200 }, (_, i) => setTimer(2_000 + i, () => undefined));
    expect(vi.getTimerCount()).toBe(1);
    for (const cancel of cancels) cancel();
    vi.advanceTimersByTime(5_000);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('re-arms earlier for a timer due before the armed one, and keeps later ones', () => {
    const setTimer = timerQueue({ now: Date.now });
    const ran: number[] = [];
    setTimer(1_000, () => ran.push(1_000));
    setTimer(5, () => ran.push(5));
    vi.advanceTimersByTime(5);
    expect(ran).toEqual([5]);
    setTimer(0, () => ran.push(0));
    vi.advanceTimersByTime(0);
    expect(ran).toEqual([5, 0]);
    vi.advanceTimersByTime(995);
    expect(ran).toEqual([5, 0, 1_000]);
  });

  it('a callback that throws does not stop the others; a timer set from a callback runs', () => {
    const setTimer = timerQueue({ now: Date.now });
    const ran: string[] = [];
    setTimer(10, () => {
      throw new Error('boom');
    });
    setTimer(10, () => {
      ran.push('second');
      setTimer(5, () => ran.push('nested'));
    });
    vi.advanceTimersByTime(10);
    expect(ran).toEqual(['second']);
    vi.advanceTimersByTime(5);
    expect(ran).toEqual(['second', 'nested']);
  });
});
