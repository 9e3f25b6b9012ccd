/**
 * Scenario time shared by the emulators of one run: milliseconds since the run started.
 * Restarting it (e.g. when a benchmark's workload begins) moves every emulator to t = 0.
 */
import { performance } from 'node:perf_hooks';

export class Timeline {
  private originMs: number;
  private readonly listeners = new Set<() => void>();

  constructor() {
    this.originMs = performance.now();
  }

  /** Scenario time in milliseconds. */
  nowMs(): number {
    return performance.now() - this.originMs;
  }

  /** Moves scenario time back to 0 and tells every subscribed emulator. */
  restart(): void {
    this.originMs = performance.now();
    for (const listener of this.listeners) listener();
  }

  /** Calls `listener` after every restart; returns the unsubscribe function. */
  onRestart(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
}
