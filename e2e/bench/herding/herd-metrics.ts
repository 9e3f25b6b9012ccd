/**
 * The herding bench's figures, defined as the simulator defines them
 * (packages/simulator/src/herding.ts) so that the rows sit side by side in
 * docs/benchmarks/herding.json: clients' mean and p95 response time (load_cv is the
 * simulator's own `loadCv`, imported by the bench). Plus each server's share of the requests
 * over time.
 */
import { quantileOfSorted } from '@webpp/simulator';

/** The q-quantile of unsorted values, by the simulator's own rule (linear interpolation between ranks). */
export function percentile(values: readonly number[], q: number): number {
  return quantileOfSorted([...values].sort((a, b) => a - b), q);
}

export function mean(values: readonly number[]): number {
  return values.length === 0 ? Number.NaN : values.reduce((sum, value) => sum + value, 0) / values.length;
}

export function median(values: readonly number[]): number {
  return percentile(values, 0.5);
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
