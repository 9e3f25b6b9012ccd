/**
 * The benchmark site's shape, shared by the upstream and the load generator: page sizes
 * (fixed per page, 2 to 32 KB, small pages more common) and Zipf popularity.
 */
const SIZES_BYTES = [2048, 4096, 8192, 16_384, 32_768];
const SIZE_WEIGHTS = [0.3, 0.3, 0.2, 0.12, 0.08];

/** Size of page `n`'s body (bytes, approximate: the rendered table varies a little). */
export function pageSizeBytes(n: number): number {
  // A fixed pseudo-random draw per page (Knuth's multiplicative hash), so popularity and size are independent.
  const draw = ((Math.imul(n + 1, 2654435761) >>> 0) % 10_000) / 10_000;
  let cumulative = 0;
  for (let index = 0; index < SIZES_BYTES.length; index += 1) {
    cumulative += SIZE_WEIGHTS[index] ?? 0;
    if (draw < cumulative) return SIZES_BYTES[index] ?? 2048;
  }
  return SIZES_BYTES[SIZES_BYTES.length - 1] ?? 2048;
}

/**
 * A Zipf sampler over ranks 0..n-1: P(rank r) ∝ 1/(r+1)^alpha (Breslau et al., "Web caching
 * and Zipf-like distributions", INFOCOM 1999: alpha 0.64–0.83 for web traces). Inverse CDF
 * by binary search; `random` in [0, 1).
 */
export function zipfSampler(n: number, alpha: number, random: () => number): () => number {
  const cdf = new Float64Array(n);
  let sum = 0;
  for (let rank = 0; rank < n; rank += 1) {
    sum += 1 / (rank + 1) ** alpha;
    cdf[rank] = sum;
  }
  return () => {
    const target = random() * sum;
    let low = 0;
    let high = n - 1;
    while (low < high) {
      const mid = (low + high) >> 1;
      if ((cdf[mid] ?? 0) < target) low = mid + 1;
      else high = mid;
    }
    return low;
  };
}
