/**
 * This server's utilisation: the fraction of time its event loop was busy over the last
 * sampling period (Node's event-loop utilisation, perf_hooks; a Node server that is
 * saturated by requests shows it near 1 whatever the cause: CPU, parsing, compression),
 * and the 99th percentile of the event-loop delay over the same period.
 */
import { monitorEventLoopDelay, performance, type EventLoopUtilization, type IntervalHistogram } from 'node:perf_hooks';

export interface UtilisationSample {
  /** Busy fraction in [0, 1] over the last complete period. */
  utilisation: number;
  /** 99th percentile of the event-loop delay over that period, ms. */
  loopDelayP99Ms: number;
}

export class Utilisation {
  private readonly histogram: IntervalHistogram;
  private periodStart: EventLoopUtilization;
  private periodStartMs: number;
  private last: UtilisationSample = { utilisation: 0, loopDelayP99Ms: 0 };

  /** @param periodMs the shortest period a sample covers; asking more often returns the last one. */
  constructor(private readonly periodMs = 1000) {
    this.histogram = monitorEventLoopDelay({ resolution: 10 });
    this.histogram.enable();
    this.periodStart = performance.eventLoopUtilization();
    this.periodStartMs = performance.now();
  }

  sample(): UtilisationSample {
    const nowMs = performance.now();
    if (nowMs - this.periodStartMs >= this.periodMs) {
      const current = performance.eventLoopUtilization();
      const delta = performance.eventLoopUtilization(current, this.periodStart);
      this.last = {
        utilisation: Math.min(1, Math.max(0, delta.utilization)),
        loopDelayP99Ms: this.histogram.count > 0 ? this.histogram.percentile(99) / 1e6 : 0,
      };
      this.histogram.reset();
      this.periodStart = current;
      this.periodStartMs = nowMs;
    }
    return this.last;
  }

  stop(): void {
    this.histogram.disable();
  }
}
