/**
 * One replica's link shared by every response in flight on it (scenario `linkSharing:
 * "shared"`): processor sharing, each of the n bodies moving gets capacity / n, as TCP
 * flows through one bottleneck roughly share it (Kleinrock, "Queueing Systems, Volume 2",
 * Wiley 1976, Section 4.4, the processor-sharing queue). A body stall takes its response
 * off the link for the stall, so the others get its share meanwhile.
 *
 * The capacity is read from the scenario at every change of the set of bodies, so a
 * schedule that ramps the bandwidth applies at the next start, end or stall on the link.
 */
import type { EventQueue, TimerHandle } from './event-queue.js';

export interface TransferSpec {
  bodyBytes: number;
  /** The body pauses after this many bytes for stallMs (stallMs 0: no stall). */
  stallAfterBytes: number;
  stallMs: number;
  onStall(atMs: number, resumesAtMs: number): void;
  onComplete(atMs: number): void;
}

export interface TransferHandle {
  /** Takes the body off the link; returns the bytes it had delivered. */
  stop(): number;
}

/** Below this many bytes, or this many ms of the link's time, a body counts as at its milestone (floating point). */
const EPSILON_BYTES = 1e-6;
const EPSILON_MS = 1e-6;

class Transfer {
  deliveredBytes = 0;
  stallDone: boolean;
  moving = true;
  stopped = false;
  resumeTimer: TimerHandle | undefined;

  constructor(readonly spec: TransferSpec) {
    this.stallDone = !(spec.stallMs > 0) || spec.stallAfterBytes >= spec.bodyBytes;
  }

  /** Bytes until its next milestone (the stall point, else the end). */
  bytesToMilestone(): number {
    return (this.stallDone ? this.spec.bodyBytes : this.spec.stallAfterBytes) - this.deliveredBytes;
  }
}

export class SharedLink {
  private readonly moving = new Set<Transfer>();
  private lastUpdateMs = 0;
  private rateBytesPerMs = Number.POSITIVE_INFINITY;
  private timer: TimerHandle | undefined;

  /** `capacityAt(tMs)`: the link's bandwidth (bytes/s) now; null = unlimited. */
  constructor(
    private readonly queue: EventQueue,
    private readonly capacityAt: (tMs: number) => number | null,
  ) {}

  /** Bodies moving on the link now (for tests and reports). */
  get activeCount(): number {
    return this.moving.size;
  }

  start(spec: TransferSpec): TransferHandle {
    const transfer = new Transfer(spec);
    this.advance();
    this.moving.add(transfer);
    this.reschedule();
    return {
      stop: () => {
        if (transfer.stopped) return transfer.deliveredBytes;
        this.advance();
        transfer.stopped = true;
        if (transfer.resumeTimer) this.queue.cancel(transfer.resumeTimer);
        this.moving.delete(transfer);
        this.reschedule();
        return transfer.deliveredBytes;
      },
    };
  }

  /** Credits every moving body with its share of the time since the last update. */
  private advance(): void {
    const nowMs = this.queue.now();
    const elapsedMs = nowMs - this.lastUpdateMs;
    this.lastUpdateMs = nowMs;
    if (this.moving.size === 0) return;
    if (!Number.isFinite(this.rateBytesPerMs)) {
      // Unlimited bandwidth: every body reaches its next milestone at once.
      for (const transfer of this.moving) transfer.deliveredBytes += transfer.bytesToMilestone();
      return;
    }
    if (elapsedMs <= 0) return;
    const bytes = this.rateBytesPerMs * elapsedMs;
    for (const transfer of this.moving) transfer.deliveredBytes = Math.min(transfer.spec.bodyBytes, transfer.deliveredBytes + bytes);
  }

  /** Handles the bodies at a milestone, then arms one timer for the next milestone. */
  private reschedule(): void {
    if (this.timer) this.queue.cancel(this.timer);
    this.timer = undefined;
    const nowMs = this.queue.now();
    const capacityNow = this.capacityAt(nowMs);
    // A milestone less than EPSILON_MS away counts as reached: the clock could not advance to it.
    const closeBytes = Math.max(EPSILON_BYTES, capacityNow === null ? 0 : (capacityNow / 1000) * EPSILON_MS);
    for (const transfer of [...this.moving]) {
      if (transfer.bytesToMilestone() > closeBytes) continue;
      this.moving.delete(transfer);
      if (!transfer.stallDone) {
        transfer.stallDone = true;
        transfer.moving = false;
        transfer.deliveredBytes = transfer.spec.stallAfterBytes;
        const resumesAtMs = nowMs + transfer.spec.stallMs;
        transfer.resumeTimer = this.queue.at(resumesAtMs, () => {
          transfer.resumeTimer = undefined;
          this.advance();
          this.moving.add(transfer);
          this.reschedule();
        });
        transfer.spec.onStall(nowMs, resumesAtMs);
      } else {
        transfer.deliveredBytes = transfer.spec.bodyBytes;
        transfer.stopped = true;
        transfer.spec.onComplete(nowMs);
      }
    }
    if (this.moving.size === 0) return;
    // Processor sharing: n bodies each get capacity / n.
    this.rateBytesPerMs = capacityNow === null ? Number.POSITIVE_INFINITY : capacityNow / 1000 / this.moving.size;
    let nextMs = Number.POSITIVE_INFINITY;
    for (const transfer of this.moving) nextMs = Math.min(nextMs, transfer.bytesToMilestone() / this.rateBytesPerMs);
    this.timer = this.queue.at(nowMs + (Number.isFinite(nextMs) ? nextMs : 0), () => {
      this.timer = undefined;
      this.advance();
      this.reschedule();
    });
  }
}
