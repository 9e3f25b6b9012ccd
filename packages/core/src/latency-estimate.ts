/**
 * The statistics of the extended Refresh algorithm (Web++ paper, Section 4.1) as pure
 * functions. The reasoning behind `n` and the timeout bounds is in docs/selection.md.
 */

/** Share of the total EWMA weight that the effective window must hold (p in eq. (5)). */
export const EFFECTIVE_WINDOW_WEIGHT = 0.99;

/** A server needs this many samples before its variance is trusted for a timeout. */
export const MIN_SAMPLES_FOR_TIMEOUT = 2;

/** Eq. (2): avg_new = (1 - r)·avg_old + r·sample. */
export function ewmaMean(previousMeanMs: number, sampleMs: number, weight: number): number {
  return (1 - weight) * previousMeanMs + weight * sampleMs;
}

/** Eq. (3): var_new = (1 - r)·var_old + r·(sample - avg_new)². */
export function ewmaVariance(
  previousVarianceMs2: number,
  sampleMs: number,
  newMeanMs: number,
  weight: number,
): number {
  const deviationMs = sampleMs - newMeanMs;
  return (1 - weight) * previousVarianceMs2 + weight * deviationMs * deviationMs;
}

export interface LatencyMoments {
  meanMs: number;
  varianceMs2: number;
  sampleCount: number;
}

/**
 * Folds one sample into the estimate with eq. (2) and (3). The first sample is the
 * initial estimate (sample_0 of eq. (4)): mean = sample, variance = 0.
 */
export function foldSample(previous: LatencyMoments, sampleMs: number, weight: number): LatencyMoments {
  if (previous.sampleCount <= 0) return { meanMs: sampleMs, varianceMs2: 0, sampleCount: 1 };
  const meanMs = ewmaMean(previous.meanMs, sampleMs, weight);
  return {
    meanMs,
    varianceMs2: ewmaVariance(previous.varianceMs2, sampleMs, meanMs, weight),
    sampleCount: previous.sampleCount + 1,
  };
}

/**
 * Eq. (5): the number m of most recent samples that carry a share p of the EWMA weight.
 * The m newest samples weigh 1 - (1 - r)^m, so m = ceil(ln(1 - p) / ln(1 - r)). (The paper
 * prints "- 1" on the right-hand side, which undercounts by one: with r = 0.95 and p = 0.99
 * it would give m = 1, whose weight is only 0.95.) Always at least 1.
 */
export function effectiveSampleWindow(weight: number, share: number = EFFECTIVE_WINDOW_WEIGHT): number {
  if (weight >= 1) return 1;
  const m = Math.ceil(Math.log(1 - share) / Math.log(1 - weight) - 1e-12);
  return Math.max(1, m);
}

/** n of eq. (1): the samples that actually shape the estimate, min(sampleCount, m of eq. (5)). */
export function effectiveSampleCount(sampleCount: number, weight: number): number {
  return Math.max(1, Math.min(sampleCount, effectiveSampleWindow(weight)));
}

/** Eq. (1): S-percentile = avg + c_S·sqrt(var)/sqrt(n). */
export function percentileOfMeanMs(meanMs: number, varianceMs2: number, n: number, z: number): number {
  return meanMs + (z * Math.sqrt(varianceMs2)) / Math.sqrt(n);
}

/** The T-percentile of one request's latency (no 1/sqrt(n): a timeout bounds a single request). */
export function latencyPercentileMs(meanMs: number, varianceMs2: number, z: number): number {
  return meanMs + z * Math.sqrt(varianceMs2);
}

export function clamp(value: number, min: number, max: number): number {
  return Math.min(max, Math.max(min, value));
}
