/**
 * Is the machine itself the bottleneck? The demo's link emulator and replica servers run in
 * this process, on Node's timers: on a busy machine (2 cores, load average 6–9) a 10 ms
 * emulated delay fires hundreds of ms late, and "near and steady" replica A looks slow for
 * reasons no replica has. This measures how late this process's timers run (Node's event-loop
 * delay histogram, monitorEventLoopDelay) over the last window, so that the dashboard can say
 * so instead of contradicting the README (issue 23, item 7).
 */
import { monitorEventLoopDelay, type IntervalHistogram } from 'node:perf_hooks';
import { availableParallelism, loadavg } from 'node:os';
import type { MachineLoadView } from '../dashboard/model.js';

/** Timer lateness beyond which emulated delays (10–150 ms) are no longer what the profiles say. */
const OVERLOADED_LAG_MS = 50;
const WINDOW_MS = 10_000;

export class MachineLoad {
  private readonly histogram: IntervalHistogram = monitorEventLoopDelay({ resolution: 10 });
  private last: MachineLoadView;
  private readonly timer: NodeJS.Timeout;

  constructor(private readonly windowMs = WINDOW_MS) {
    this.histogram.enable();
    this.last = this.read();
    this.timer = setInterval(() => {
      this.last = this.read();
      this.histogram.reset();
    }, windowMs);
    this.timer.unref();
  }

  /** The last full window, or the current one while the first is running. */
  view(): MachineLoadView {
    const current = this.read();
    return current.timerLagMaxMs > this.last.timerLagMaxMs ? current : this.last;
  }

  close(): void {
    clearInterval(this.timer);
    this.histogram.disable();
  }

  private read(): MachineLoadView {
    // The histogram holds the delay of each 10 ms sampling timer, in ns, the 10 ms included.
    const lateMs = (ns: number): number => (Number.isFinite(ns) ? Math.max(0, Math.round(ns / 1e6 - 10)) : 0);
    const timerLagP95Ms = this.histogram.count > 0 ? lateMs(this.histogram.percentile(95)) : 0;
    const timerLagMaxMs = this.histogram.count > 0 ? lateMs(this.histogram.max) : 0;
    return {
      timerLagP95Ms,
      timerLagMaxMs,
      windowMs: this.windowMs,
      loadAverage: Math.round((loadavg()[0] ?? 0) * 10) / 10,
      cores: availableParallelism(),
      overloaded: timerLagP95Ms >= OVERLOADED_LAG_MS,
    };
  }
}
