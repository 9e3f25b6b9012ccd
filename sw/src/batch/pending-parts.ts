/**
 * Embedded resources announced by a batch manifest and not yet arrived. The browser asks
 * for them as soon as it parses the page, usually before their parts have streamed in: such
 * a request waits here for its part instead of going to the network a second time.
 *
 * Nothing waits forever (the peer project freecdn leaves requests hanging when its bundle
 * stream fails): every announcement is settled by its part, by a failure report (stream cut,
 * corrupt part, part missing), or by the waiter's own timeout; the last two send the
 * request to the network through normal replica selection.
 */
import type { BatchPart } from '@webpp/core';

export type PartOutcome =
  | { kind: 'part'; part: BatchPart }
  | { kind: 'fallback'; reason: string };

interface Pending {
  promise: Promise<PartOutcome>;
  resolve(outcome: PartOutcome): void;
  settled: boolean;
  /** Batches still expected to deliver this URL (two tabs may load the same page at once). */
  expecting: number;
}

export class PendingParts {
  private readonly pending = new Map<string, Pending>();

  /** Whether a request for `url` should wait here. Synchronous. */
  has(url: string): boolean {
    return this.pending.has(url);
  }

  get size(): number {
    return this.pending.size;
  }

  /** A batch announced `url`. */
  expect(url: string): void {
    const existing = this.pending.get(url);
    if (existing !== undefined && !existing.settled) {
      existing.expecting += 1;
      return;
    }
    let resolve!: (outcome: PartOutcome) => void;
    const promise = new Promise<PartOutcome>((done) => {
      resolve = done;
    });
    const entry: Pending = { promise, resolve: (outcome) => resolve(outcome), settled: false, expecting: 1 };
    this.pending.set(url, entry);
  }

  /** The part arrived: every waiter gets it. The entry stays until `release` (it is being stored). */
  deliver(part: BatchPart): void {
    const entry = this.pending.get(part.url);
    if (entry === undefined || entry.settled) return;
    entry.settled = true;
    entry.resolve({ kind: 'part', part });
  }

  /**
   * One batch will not deliver `url` after all. Waiters fall back to the network once no
   * batch is expected to deliver it any more.
   */
  fail(url: string, reason: string): void {
    const entry = this.pending.get(url);
    if (entry === undefined || entry.settled) return;
    entry.expecting -= 1;
    if (entry.expecting > 0) return;
    entry.settled = true;
    entry.resolve({ kind: 'fallback', reason });
    this.pending.delete(url);
  }

  /** The part is in the logical cache now: later requests find it there. */
  release(url: string): void {
    const entry = this.pending.get(url);
    if (entry?.settled) this.pending.delete(url);
  }

  /**
   * Waits for the part of `url`, at most `timeoutMs`; undefined when nothing is pending.
   * A timeout answers `fallback` for this waiter only (the part may still arrive for others).
   */
  wait(url: string, timeoutMs: number): Promise<PartOutcome> | undefined {
    const entry = this.pending.get(url);
    if (entry === undefined) return undefined;
    if (entry.settled) return entry.promise;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const timeout = new Promise<PartOutcome>((resolve) => {
      timer = setTimeout(() => resolve({ kind: 'fallback', reason: `part not received within ${timeoutMs} ms` }), timeoutMs);
    });
    return Promise.race([entry.promise, timeout]).finally(() => clearTimeout(timer));
  }
}
