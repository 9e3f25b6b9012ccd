/**
 * Progress of a long benchmark, as a user expects of a long command: on a terminal, one
 * status line redrawn in place (`\r`) with the part being run, how far along, the time
 * spent and the time left (estimated); and a one-line summary per finished part. When the
 * output is not a terminal (CI, a pipe, a file) nothing is redrawn: only the summaries and
 * the other log lines are printed.
 *
 *   const progress = new Progress({ title: 'evaluation', totalUnits: 600_000 });
 *   progress.step('peak (1/4): 10 policies running', 150_000, { expectedMs: 150_000 });
 *   …
 *   progress.complete('peak (1/4) done in 2 min 41 s: …');
 *   progress.close();
 *
 * Units are the caller's: expected milliseconds of work are best, because the time left is
 * estimated from the share of units done so far (time spent × units left ÷ units done).
 */
import { formatDuration, remainingMs, statusLine } from './progress-format.js';

export { formatDuration, remainingMs, statusLine } from './progress-format.js';

/** Where progress goes: process.stdout, or anything with the same write/isTTY/columns. */
export interface ProgressOutput {
  write(text: string): unknown;
  isTTY?: boolean;
  columns?: number;
}

export interface ProgressOptions {
  /** The command's name, first on the status line ("evaluation"). */
  title: string;
  /** All the work, in the caller's units. */
  totalUnits: number;
  /** Default: process.stdout. */
  output?: ProgressOutput;
  /** Redraw a status line. Default: the output is a terminal, $CI is unset and $TERM is not "dumb". */
  interactive?: boolean;
  /** Clock in milliseconds; injectable for tests. */
  now?: () => number;
  /** How often the status line is redrawn while nothing is reported (time passes). 0: never. */
  redrawIntervalMs?: number;
}

interface CurrentStep {
  label: string;
  units: number;
  startedAtMs: number;
  /** Timed step: its units are done in proportion to the time spent, up to expectedMs. */
  expectedMs: number | undefined;
}

/** Minimum time between two redraws caused by calls (the timer redraws anyway). */
const MIN_REDRAW_GAP_MS = 100;
const CLEAR_LINE = '\r\x1b[2K';

export function isInteractive(output: ProgressOutput, env: NodeJS.ProcessEnv = process.env): boolean {
  return output.isTTY === true && !env['CI'] && env['TERM'] !== 'dumb';
}

export class Progress {
  readonly interactive: boolean;
  private readonly output: ProgressOutput;
  private readonly now: () => number;
  private readonly startedAtMs: number;
  private readonly timer: NodeJS.Timeout | undefined;
  private totalUnits: number;
  private doneUnits = 0;
  private current: CurrentStep | undefined;
  private lastDrawMs = -Infinity;
  private statusShown = false;
  private closed = false;

  constructor(private readonly options: ProgressOptions) {
    this.output = options.output ?? process.stdout;
    this.now = options.now ?? (() => performance.now());
    this.interactive = options.interactive ?? isInteractive(this.output);
    this.totalUnits = Math.max(0, options.totalUnits);
    this.startedAtMs = this.now();
    const intervalMs = options.redrawIntervalMs ?? 1000;
    if (this.interactive && intervalMs > 0) {
      this.timer = setInterval(() => this.draw(true), intervalMs);
      this.timer.unref();
    }
  }

  /** Starts a part of the work (the previous one, if any, counts as done without a summary). */
  step(label: string, units: number, options: { expectedMs?: number } = {}): void {
    if (this.current) this.doneUnits += this.current.units;
    this.current = { label, units: Math.max(0, units), startedAtMs: this.now(), expectedMs: options.expectedMs };
    this.draw(true);
  }

  /** Renames the current part (e.g. a sub-phase) without changing how far along it is. */
  label(label: string): void {
    if (this.current) this.current.label = label;
    this.draw(false);
  }

  /** The total changed (e.g. a part turned out larger); the fraction done is recomputed. */
  setTotal(totalUnits: number): void {
    this.totalUnits = Math.max(0, totalUnits);
    this.draw(false);
  }

  /** Finishes the current part; prints its one-line summary, if given, on terminals and in CI alike. */
  complete(summary?: string): void {
    if (this.current) this.doneUnits += this.current.units;
    this.current = undefined;
    if (summary !== undefined) this.log(summary);
    else this.draw(true);
  }

  /** Prints a line that stays (above the status line on a terminal). */
  log(line: string): void {
    if (this.statusShown) this.output.write(CLEAR_LINE);
    this.statusShown = false;
    this.output.write(`${line}\n`);
    this.draw(true);
  }

  /** Share of the work done, in [0, 1]. */
  fraction(): number {
    if (this.totalUnits === 0) return 0;
    let done = this.doneUnits;
    const step = this.current;
    if (step?.expectedMs !== undefined && step.expectedMs > 0) {
      done += step.units * Math.min(1, (this.now() - step.startedAtMs) / step.expectedMs);
    }
    return Math.min(1, done / this.totalUnits);
  }

  /** Milliseconds since the start. */
  elapsedMs(): number {
    return this.now() - this.startedAtMs;
  }

  /** The status line as it would be drawn now. */
  status(): string {
    const fraction = this.fraction();
    const elapsedMs = this.elapsedMs();
    const step = this.current;
    let label = step?.label ?? '';
    if (step?.expectedMs !== undefined) {
      label += ` ${formatDuration(Math.min(this.now() - step.startedAtMs, step.expectedMs))} / ${formatDuration(step.expectedMs)}`;
    }
    return statusLine({
      title: this.options.title,
      fraction,
      elapsedMs,
      remainingMs: remainingMs(elapsedMs, fraction),
      label,
      columns: this.output.columns,
    });
  }

  /** Clears the status line and stops redrawing; log() still prints lines. */
  close(): void {
    this.closed = true;
    if (this.timer) clearInterval(this.timer);
    if (this.statusShown) this.output.write(CLEAR_LINE);
    this.statusShown = false;
  }

  private draw(force: boolean): void {
    if (!this.interactive || this.closed) return;
    const nowMs = this.now();
    if (!force && nowMs - this.lastDrawMs < MIN_REDRAW_GAP_MS) return;
    this.lastDrawMs = nowMs;
    this.output.write(`${CLEAR_LINE}${this.status()}`);
    this.statusShown = true;
  }
}
