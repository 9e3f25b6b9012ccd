/**
 * Time a real client adds to an exchange beyond what the link accounts for, as a function of
 * scenario time: the simulator's model of what the browser bench measures as "per-request
 * time beyond the emulated link" (the worker, Chromium, the origin and the emulators sharing
 * a loaded machine).
 *
 * Why a time series and not a constant: on the shared bench machine that time is tens of ms
 * on a quiet machine but hundreds of ms to seconds when other jobs run, and it moves with
 * the machine's load, at the same moment for every browser context (in one 20 s run the second
 * request of every policy, sent at the same scenario instant, took 2.3–2.7 s against
 * 0.4–0.7 s for the first). A constant (the old `serviceMs` = its median) gave every
 * simulated exchange the same small offset, so the simulated policies learnt from noiseless
 * times to first byte and picked the best replica far more often than the worker could
 * (best-server share 0.84 simulated against 0.39 in the browser, evening, issue 11's runs).
 * Here each exchange gets the delay measured on the real client around the moment it is
 * sent, so the policy's estimates see the same noise the worker's did.
 *
 * Two parts, because the engine sees them differently: `firstByteMs` delays the response
 * head (the policy's time-to-first-byte samples include it), `bodyMs` delays the end of the
 * body after the last byte left the link (reading the body through the worker into the page).
 */

/** One request measured on the real client: what it took beyond its emulated link, at scenario time atMs. */
export interface ClientDelaySample {
  atMs: number;
  /** Time to first byte beyond the link's (delay + first-byte stall). */
  firstByteMs: number;
  /** The rest: page time beyond the link's complete time, minus firstByteMs (≥ 0). */
  bodyMs: number;
}

export interface ClientDelay {
  /** The delay of an exchange sent at scenario time `atMs`. */
  at(atMs: number): { firstByteMs: number; bodyMs: number };
}

/** A constant delay (the old model: `serviceMs` added to every first byte). */
export function constantClientDelay(firstByteMs: number, bodyMs = 0): ClientDelay {
  const delay = { firstByteMs, bodyMs };
  return { at: () => delay };
}

const medianOf = (values: number[]): number => {
  const sorted = values.sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
};

/**
 * The delay at time t: the median of the `neighbours` samples nearest to t (by |atMs − t|), per
 * part. One neighbour by default, the nearest request: it passes on the measured noise whole
 * (the policies under test meet their own draws of it, not a smoothed level). On the first
 * short browser run it was tried on (3 scenarios, 30 s), the nearest sample agreed on 20 of 27
 * rows, a median of three on 16, a constant median on 15. Negative samples (a link draw the
 * client beat by clock granularity) count as 0. Without samples: no delay.
 */
export function clientDelayFromSamples(samples: readonly ClientDelaySample[], neighbours = 1): ClientDelay {
  if (!(Number.isInteger(neighbours) && neighbours >= 1)) throw new RangeError(`neighbours must be a positive integer (got ${neighbours})`);
  const sorted = samples
    .filter((sample) => Number.isFinite(sample.atMs) && Number.isFinite(sample.firstByteMs) && Number.isFinite(sample.bodyMs))
    .map((sample) => ({ atMs: sample.atMs, firstByteMs: Math.max(0, sample.firstByteMs), bodyMs: Math.max(0, sample.bodyMs) }))
    .sort((a, b) => a.atMs - b.atMs);
  if (sorted.length === 0) return constantClientDelay(0);
  const k = Math.min(neighbours, sorted.length);
  return {
    at(atMs) {
      // The first sample at or after atMs, then widen to the k nearest on either side.
      let low = 0;
      let high = sorted.length;
      while (low < high) {
        const middle = (low + high) >> 1;
        if (sorted[middle]!.atMs < atMs) low = middle + 1;
        else high = middle;
      }
      let left = low - 1;
      let right = low;
      const nearest: (typeof sorted)[number][] = [];
      while (nearest.length < k) {
        const takeLeft = right >= sorted.length || (left >= 0 && atMs - sorted[left]!.atMs <= sorted[right]!.atMs - atMs);
        nearest.push(takeLeft ? sorted[left--]! : sorted[right++]!);
      }
      return { firstByteMs: medianOf(nearest.map((sample) => sample.firstByteMs)), bodyMs: medianOf(nearest.map((sample) => sample.bodyMs)) };
    },
  };
}
