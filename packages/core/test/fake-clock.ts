import type { EngineIO, Exchange, ExchangeEvents } from '../src/index.js';

/** A manual clock for tests: time moves only when the test says so. */
export class FakeClock {
  constructor(public nowMs = 1_000_000) {}
  readonly now = (): number => this.nowMs;
  advance(ms: number): number {
    this.nowMs += ms;
    return this.nowMs;
  }
}

/** Deterministic uniform numbers in [0, 1) (mulberry32). */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * A manual clock with timers, for driving the engine in tests: `runUntil` and `advance` move
 * time from one timer to the next (ties in the order they were set).
 */
export class VirtualTimers {
  private timers: { atMs: number; seq: number; run: () => void }[] = [];
  private seq = 0;

  constructor(public nowMs: number) {}

  /** Runs `run` after `delayMs` of virtual time; returns its cancel. */
  timer(delayMs: number, run: () => void): () => void {
    const timer = { atMs: this.nowMs + delayMs, seq: this.seq++, run };
    this.timers.push(timer);
    return () => void (this.timers = this.timers.filter((other) => other !== timer));
  }

  /** Runs timers until `until()`, or none is left before `limitMs` from now. */
  runUntil(until: () => boolean, limitMs: number): void {
    const endMs = this.nowMs + limitMs;
    while (!until()) {
      const next = [...this.timers].sort((a, b) => a.atMs - b.atMs || a.seq - b.seq)[0];
      if (!next || next.atMs > endMs) break;
      this.timers = this.timers.filter((timer) => timer !== next);
      this.nowMs = Math.max(this.nowMs, next.atMs);
      next.run();
    }
  }

  /** An engine's I/O on this clock: its timers, and exchanges sent to `send` (which returns the exchange's cancel). */
  engineIO<R>(send: (exchange: Exchange, events: ExchangeEvents<R>) => () => void): EngineIO<R> {
    return { now: () => this.nowMs, setTimer: (delayMs, run) => this.timer(delayMs, run), send };
  }

  /** Runs every timer due within `ms`, and ends `ms` later. */
  advance(ms: number): void {
    const endMs = this.nowMs + ms;
    this.runUntil(() => false, ms);
    this.nowMs = endMs;
  }
}
