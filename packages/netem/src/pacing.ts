/**
 * Paced writing of a response body: a bandwidth limit (bytes per second, per response)
 * and an optional stall part-way through. Pacing is against absolute target times, so
 * timer lateness never accumulates into drift.
 */
import type { Readable } from 'node:stream';
import type { ServerResponse } from 'node:http';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';

export interface PaceOptions {
  bandwidthBytesPerSec: number | null;
  /** Pause this long after `stallAtByte` bytes; 0 for no stall. */
  stallMs: number;
  stallAtByte: number;
  /** One link shared with the server's other responses (scenario `linkSharing: "shared"`). */
  sharedLink?: SharedPace;
  /** Checked before every write: false stops pacing (outage, client gone). */
  shouldContinue: () => boolean;
  signal: AbortSignal;
}

/**
 * A link shared by every response of one server: each slice of a body takes its turn on
 * the link, which is busy until the slice has crossed it at the whole bandwidth. Slices of
 * concurrent bodies interleave first come, first served, so n bodies in flight each move
 * at about bandwidth / n (processor sharing at the grain of a slice, as the simulator's
 * shared-link.ts models it exactly).
 */
export class SharedPace {
  private freeAtMs = 0;

  /** Books `bytes` on the link now; returns when they have crossed it. */
  book(bytes: number, bandwidthBytesPerSec: number): number {
    this.freeAtMs = Math.max(performance.now(), this.freeAtMs) + (bytes / bandwidthBytesPerSec) * 1000;
    return this.freeAtMs;
  }
}

/** Slices of about 20 ms worth of bytes keep the pacing smooth without a timer per byte. */
function sliceBytes(bandwidthBytesPerSec: number | null): number {
  if (bandwidthBytesPerSec === null) return Number.POSITIVE_INFINITY;
  return Math.max(512, Math.floor(bandwidthBytesPerSec / 50));
}

/**
 * Resolves once performance.now() ≥ targetMs. Timers may fire a fraction of a millisecond
 * early against performance.now(), so re-check: a configured delay is a guaranteed minimum.
 */
export async function waitUntil(targetMs: number, signal: AbortSignal): Promise<void> {
  for (let waitMs = targetMs - performance.now(); waitMs > 0; waitMs = targetMs - performance.now()) {
    await sleep(Math.ceil(waitMs), undefined, { signal });
  }
}

async function write(res: ServerResponse, chunk: Buffer, signal: AbortSignal): Promise<void> {
  if (res.write(chunk)) return;
  await new Promise<void>((resolve, reject) => {
    const onAbort = (): void => {
      res.off('drain', onDrain);
      reject(signal.reason);
    };
    const onDrain = (): void => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    };
    res.once('drain', onDrain);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

/**
 * Copies `body` to `res` at the given pace. Returns the number of bytes written; throws
 * the abort reason if `signal` aborts. Does not end `res`.
 */
export async function paceBody(body: Readable, res: ServerResponse, options: PaceOptions): Promise<number> {
  const startMs = performance.now();
  const maxSlice = sliceBytes(options.bandwidthBytesPerSec);
  let sentBytes = 0;
  let stalled = options.stallMs <= 0;
  let stallDebtMs = 0;
  const stallIfDue = async (): Promise<void> => {
    if (stalled || sentBytes < options.stallAtByte) return;
    stalled = true;
    stallDebtMs = options.stallMs;
    await waitUntil(performance.now() + options.stallMs, options.signal);
  };
  for await (const data of body) {
    const chunk = typeof data === 'string' ? Buffer.from(data) : (data as Buffer);
    for (let offset = 0; offset < chunk.length; ) {
      await stallIfDue();
      // Never cut across the stall point, so the stall happens after exactly stallAtByte bytes.
      const untilStall = stalled ? Number.POSITIVE_INFINITY : options.stallAtByte - sentBytes;
      const length = Math.min(maxSlice, chunk.length - offset, untilStall);
      const slice = chunk.subarray(offset, offset + length);
      if (options.bandwidthBytesPerSec !== null && options.sharedLink) {
        // A shared link: the slice waits for its turn and its time on the link.
        await waitUntil(options.sharedLink.book(length, options.bandwidthBytesPerSec), options.signal);
      } else if (options.bandwidthBytesPerSec !== null) {
        // Bytes leave no earlier than bandwidth allows since the body started (stalls excluded).
        await waitUntil(startMs + stallDebtMs + ((sentBytes + length) / options.bandwidthBytesPerSec) * 1000, options.signal);
      }
      if (!options.shouldContinue()) return sentBytes;
      await write(res, slice, options.signal);
      sentBytes += length;
      offset += length;
    }
  }
  await stallIfDue();
  return sentBytes;
}
