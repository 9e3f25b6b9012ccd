/**
 * The herding bench's figures, defined as the simulator defines them
 * (packages/simulator/src/herding.ts) so that the rows sit side by side in
 * docs/benchmarks/herding.json: clients' mean and p95 response time, and load_cv — in each
 * one-second bin, the standard deviation of the servers' arrivals over their mean, averaged
 * over the bins after the warm-up (0: even at every moment; √(N − 1), 1.41 for 3 servers:
 * all on one). Plus each server's share of the requests over time.
 */

export function percentile(values: readonly number[], q: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1));
  return sorted[rank] as number;
}

export function mean(values: readonly number[]): number {
  return values.length === 0 ? Number.NaN : values.reduce((sum, value) => sum + value, 0) / values.length;
}

export function median(values: readonly number[]): number {
  return percentile(values, 0.5);
}

/** Coefficient of variation across servers per bin, averaged over bins [fromBin, toBin). */
export function loadCv(series: Readonly<Record<string, readonly number[]>>, fromBin: number, toBin: number): number {
  const rows = Object.values(series);
  let sum = 0;
  let bins = 0;
  for (let bin = fromBin; bin < toBin; bin++) {
    const loads = rows.map((row) => row[bin] ?? 0);
    const average = loads.reduce((a, b) => a + b, 0) / loads.length;
    if (average === 0) continue;
    const variance = loads.reduce((a, b) => a + (b - average) ** 2, 0) / loads.length;
    sum += Math.sqrt(variance) / average;
    bins++;
  }
  return bins === 0 ? Number.NaN : sum / bins;
}

/** Each server's share of the arrivals, per group of `binsPerStep` bins (0..1, rounded to 0.01). */
export function sharesOverTime(series: Readonly<Record<string, readonly number[]>>, binsPerStep: number): Record<string, number[]> {
  const names = Object.keys(series);
  const length = Math.max(...names.map((name) => series[name]?.length ?? 0));
  const shares: Record<string, number[]> = Object.fromEntries(names.map((name) => [name, []]));
  for (let start = 0; start < length; start += binsPerStep) {
    const sums = names.map((name) => (series[name] ?? []).slice(start, start + binsPerStep).reduce((a, b) => a + b, 0));
    const total = sums.reduce((a, b) => a + b, 0);
    names.forEach((name, index) => shares[name]?.push(total === 0 ? 0 : Math.round(((sums[index] ?? 0) / total) * 100) / 100));
  }
  return shares;
}
