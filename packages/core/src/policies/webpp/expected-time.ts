/**
 * The expected response time of a request to a server, and of a hedged request to two.
 *
 * Size-aware (issue 11): expected time = first-byte estimate + sizeBytes / throughput
 * estimate, so small resources rank by first byte and large ones by total time. C3 (Suresh
 * et al., NSDI 2015) ranks replicas by an estimate of the whole response time from client
 * feedback rather than by one latency figure; this is that idea for a browser, where the
 * transfer of the body is the part that the first byte does not show.
 *
 * Hedged (Dean and Barroso, "The Tail at Scale", CACM 2013): the primary p is sent at 0 and
 * the hedge h at delay d unless p's head has come; the first head wins and its body follows:
 *
 *   E[T] = Σ_i w_i · ( x_i ≤ d ? x_i + B_p : Σ_j v_j · min'(x_i + B_p, d + y_j + B_h) )
 *
 * with x_i, w_i p's first-byte samples and weights, y_j, v_j h's, B the body times, and
 * min' choosing by which head comes first (x_i ≤ d + y_j). Both distributions are the
 * policy's own sketches, so a replica with rare stalls ranks by what it costs with a hedge:
 * its fast majority.
 */
import type { WeightedSamples } from './latency-sketch.js';

/** sizeBytes / throughput (ms), 0 when the size or the throughput is unknown. */
export function bodyMsOf(sizeBytes: number, bytesPerMs: number | undefined): number {
  if (!(sizeBytes > 0) || bytesPerMs === undefined || !(bytesPerMs > 0)) return 0;
  return sizeBytes / bytesPerMs;
}

/** E[first byte] + body time (ms). */
export function expectedMs(ttfb: WeightedSamples, bodyMs: number): number {
  let mean = 0;
  ttfb.valuesMs.forEach((value, i) => {
    mean += value * (ttfb.weights[i] as number);
  });
  return mean + bodyMs;
}

/**
 * E[T] of p hedged by h after delayMs (formula above). The inner sum splits at the hedge
 * values below x − d (the hedge's head first): with prefix sums of h's weights and of
 * weight × value it is one binary search, so the whole is O(n log m).
 */
export function expectedHedgedMs(
  primary: WeightedSamples,
  primaryBodyMs: number,
  delayMs: number,
  hedge: WeightedSamples,
  hedgeBodyMs: number,
): number {
  const { weightBelow, weightedValueBelow } = prefixSums(hedge);
  let total = 0;
  primary.valuesMs.forEach((x, i) => {
    const w = primary.weights[i] as number;
    if (x <= delayMs) {
      total += w * (x + primaryBodyMs);
      return;
    }
    const k = countBelow(hedge.valuesMs, x - delayMs); // hedge values y < x − d: the hedge wins
    const hedgeWins = weightBelow[k] as number;
    total += w * ((1 - hedgeWins) * (x + primaryBodyMs) + hedgeWins * (delayMs + hedgeBodyMs) + (weightedValueBelow[k] as number));
  });
  return total;
}

const prefixCache = new WeakMap<WeightedSamples, { weightBelow: number[]; weightedValueBelow: number[] }>();

/** weightBelow[k] = Σ_{j<k} v_j and weightedValueBelow[k] = Σ_{j<k} v_j·y_j (cached per distribution). */
function prefixSums(samples: WeightedSamples): { weightBelow: number[]; weightedValueBelow: number[] } {
  let sums = prefixCache.get(samples);
  if (sums === undefined) {
    const weightBelow = [0];
    const weightedValueBelow = [0];
    samples.valuesMs.forEach((y, j) => {
      const v = samples.weights[j] as number;
      weightBelow.push((weightBelow.at(-1) as number) + v);
      weightedValueBelow.push((weightedValueBelow.at(-1) as number) + v * y);
    });
    sums = { weightBelow, weightedValueBelow };
    prefixCache.set(samples, sums);
  }
  return sums;
}

/** How many of the ascending `values` are strictly below `limit`. */
function countBelow(values: readonly number[], limit: number): number {
  let low = 0;
  let high = values.length;
  while (low < high) {
    const middle = (low + high) >> 1;
    if ((values[middle] as number) < limit) low = middle + 1;
    else high = middle;
  }
  return low;
}

/** Share of p's requests that would send the hedge (head not there by delayMs). */
export function hedgeFireShare(primary: WeightedSamples, delayMs: number): number {
  let share = 0;
  primary.valuesMs.forEach((x, i) => {
    if (x > delayMs) share += primary.weights[i] as number;
  });
  return share;
}
