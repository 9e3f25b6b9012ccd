/** Summary statistics of response times. */

export interface Summary {
  count: number;
  meanMs: number;
  medianMs: number;
  p95Ms: number;
}

/** The q-quantile (0 ≤ q ≤ 1) of sorted values, by linear interpolation between ranks. */
export function quantileOfSorted(sorted: readonly number[], q: number): number {
  if (sorted.length === 0) return Number.NaN;
  const rank = (sorted.length - 1) * q;
  const low = Math.floor(rank);
  const high = Math.ceil(rank);
  return sorted[low]! + (sorted[high]! - sorted[low]!) * (rank - low);
}

export function summarize(values: readonly number[]): Summary {
  const sorted = Float64Array.from(values).sort();
  const asArray = Array.from(sorted);
  const sum = asArray.reduce((total, value) => total + value, 0);
  return {
    count: asArray.length,
    meanMs: asArray.length === 0 ? Number.NaN : sum / asArray.length,
    medianMs: quantileOfSorted(asArray, 0.5),
    p95Ms: quantileOfSorted(asArray, 0.95),
  };
}
