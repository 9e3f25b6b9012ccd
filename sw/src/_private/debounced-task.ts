/**
 * Runs a task at most once per `delayMs`, however often it is requested: the way the
 * worker batches IndexedDB writes off the hot path. Every caller gets the promise of the
 * next run, to hand to `event.waitUntil`, so the worker stays alive until the write lands.
 */
export class DebouncedTask {
  private pending: Promise<void> | undefined;

  constructor(
    private readonly delayMs: number,
    private readonly task: () => Promise<void>,
  ) {}

  /** Schedules a run (unless one is already scheduled) and returns its promise. Never rejects. */
  schedule(): Promise<void> {
    this.pending ??= new Promise<void>((resolve) => setTimeout(resolve, this.delayMs)).then(() => this.runNow());
    return this.pending;
  }

  /** Runs now (cancelling nothing: a scheduled run still happens, and finds little to do). */
  async runNow(): Promise<void> {
    this.pending = undefined;
    try {
      await this.task();
    } catch {
      // Persistence is best effort: the in-memory state stays authoritative.
    }
  }
}
