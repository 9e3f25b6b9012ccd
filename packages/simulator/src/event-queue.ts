/**
 * The virtual clock of the discrete-event simulator: a binary min-heap of timed callbacks.
 * Events at the same time run in the order they were scheduled, so runs are deterministic.
 */

export interface TimerHandle {
  readonly atMs: number;
}

interface Entry extends TimerHandle {
  readonly seq: number;
  readonly run: () => void;
  cancelled: boolean;
}

export class EventQueue {
  private readonly heap: Entry[] = [];
  private nextSeq = 0;
  private currentMs = 0;
  private executed = 0;

  /** Virtual time in milliseconds. */
  now(): number {
    return this.currentMs;
  }

  /** Events run so far. */
  get eventsRun(): number {
    return this.executed;
  }

  /** Runs `run` at virtual time `atMs` (never earlier than now). */
  at(atMs: number, run: () => void): TimerHandle {
    const entry: Entry = { atMs: Math.max(atMs, this.currentMs), seq: this.nextSeq++, run, cancelled: false };
    this.push(entry);
    return entry;
  }

  /** Runs `run` after `delayMs` of virtual time. */
  after(delayMs: number, run: () => void): TimerHandle {
    return this.at(this.currentMs + delayMs, run);
  }

  cancel(handle: TimerHandle | undefined): void {
    if (handle) (handle as Entry).cancelled = true;
  }

  /** Runs events in time order until none is left or `shouldStop()` turns true. */
  run(shouldStop: () => boolean = () => false): void {
    while (this.heap.length > 0 && !shouldStop()) {
      const entry = this.pop();
      if (entry.cancelled) continue;
      this.currentMs = entry.atMs;
      this.executed++;
      entry.run();
    }
  }

  private before(a: Entry, b: Entry): boolean {
    return a.atMs < b.atMs || (a.atMs === b.atMs && a.seq < b.seq);
  }

  private push(entry: Entry): void {
    const heap = this.heap;
    heap.push(entry);
    let index = heap.length - 1;
    while (index > 0) {
      const parent = (index - 1) >> 1;
      if (!this.before(heap[index]!, heap[parent]!)) break;
      [heap[index], heap[parent]] = [heap[parent]!, heap[index]!];
      index = parent;
    }
  }

  private pop(): Entry {
    const heap = this.heap;
    const top = heap[0]!;
    const last = heap.pop()!;
    if (heap.length > 0) {
      heap[0] = last;
      let index = 0;
      for (;;) {
        const left = 2 * index + 1;
        const right = left + 1;
        let smallest = index;
        if (left < heap.length && this.before(heap[left]!, heap[smallest]!)) smallest = left;
        if (right < heap.length && this.before(heap[right]!, heap[smallest]!)) smallest = right;
        if (smallest === index) break;
        [heap[index], heap[smallest]] = [heap[smallest]!, heap[index]!];
        index = smallest;
      }
    }
    return top;
  }
}
