/**
 * How well eq. (3) estimates latency spread, and what that does to an unbounded T-percentile
 * timeout (docs/selection.md, "Timeouts"). Deterministic: a seeded generator draws 100 000
 * latencies from N(200 ms, 50 ms) ("near") and N(2 s, 0.5 s) ("far"); for each r, the
 * estimate is updated with eq. (2) and (3) and every sample is checked against the timeout
 * computed before it arrived: unbounded, FAST_PRESET bounds without the mean multiple
 * (floor and ceiling only), and FAST_PRESET as shipped.
 *
 * Run: npm run bench variance   (or: node --import tsx packages/core/bench/variance.bench.ts)
 * Writes docs/benchmarks/variance.json.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { FAST_PRESET, LatencyTable, foldSample, latencyPercentileMs, percentileToZ, resolveSelectionConfig } from '../src/index.js';

const SAMPLES = 100_000;
const WARMUP_SAMPLES = 100;
const SCENARIOS = [
  { name: 'near', trueMeanMs: 200, trueSdMs: 50 },
  { name: 'far', trueMeanMs: 2000, trueSdMs: 500 },
];
const T = 99.9;

/** Park–Miller generator and Box–Muller: deterministic normal draws. */
function normalSource(seed: number): () => number {
  let state = seed;
  const uniform = () => {
    state = (state * 16807) % 2147483647;
    return state / 2147483647;
  };
  return () => Math.sqrt(-2 * Math.log(uniform())) * Math.cos(2 * Math.PI * uniform());
}

const rows = SCENARIOS.flatMap(({ name, trueMeanMs, trueSdMs }) =>
  [0.95, 0.5, 0.2].map((weight) => {
    const normal = normalSource(1);
    const tableWith = (partial: object) => new LatencyTable(resolveSelectionConfig({ ewmaWeight: weight, ...partial }, FAST_PRESET), () => 0);
    const floorOnly = tableWith({ timeoutMeanMultiple: 0 });
    const shipped = tableWith({});
    let moments = { meanMs: 0, varianceMs2: 0, sampleCount: 0 };
    let sdSumMs = 0;
    const cutOff = { unbounded: 0, floorOnly: 0, shipped: 0 };
    let counted = 0;
    for (let i = 0; i < SAMPLES; i++) {
      const sampleMs = Math.max(0, trueMeanMs + trueSdMs * normal());
      if (i >= WARMUP_SAMPLES) {
        counted++;
        sdSumMs += Math.sqrt(moments.varianceMs2);
        if (sampleMs > latencyPercentileMs(moments.meanMs, moments.varianceMs2, percentileToZ(T))) cutOff.unbounded++;
        if (sampleMs > floorOnly.timeoutMs('s')) cutOff.floorOnly++;
        if (sampleMs > shipped.timeoutMs('s')) cutOff.shipped++;
      }
      moments = foldSample(moments, sampleMs, weight);
      floorOnly.recordSample('s', sampleMs);
      shipped.recordSample('s', sampleMs);
    }
    const rate = (count: number) => Math.round((count / counted) * 10_000) / 10_000;
    return {
      scenario: name,
      r: weight,
      trueSdMs,
      meanEstimatedSdMs: Math.round((sdSumMs / counted) * 10) / 10,
      cutOffUnbounded: rate(cutOff.unbounded),
      cutOffFloorAndCeilingOnly: rate(cutOff.floorOnly),
      cutOffFastPreset: rate(cutOff.shipped),
    };
  }),
);

console.log(`eq. (3) on ${SAMPLES} normal latency samples per row, T = ${T}; cutOff = share of requests a timeout would cut`);
console.table(rows);
const out = join(dirname(fileURLToPath(import.meta.url)), '../../../docs/benchmarks/variance.json');
mkdirSync(dirname(out), { recursive: true });
writeFileSync(out, `${JSON.stringify({ samples: SAMPLES, scenarios: SCENARIOS, timeoutPercentile: T, rows }, null, 2)}\n`);
console.log(`wrote ${out}`);
