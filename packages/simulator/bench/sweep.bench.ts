/**
 * Parameter sweep of the extended Refresh algorithm (paper Section 4.2, Figures 5 and 6):
 * r, TTL, S, T, the timeout floor, F and the number of clients sharing a table, one at a
 * time around FAST_PRESET and PAPER_DEFAULTS, on every shipped scenario, averaged over
 * three seeds. Writes docs/benchmarks/sweep.json and sweep.md.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { BUILTIN_SCENARIOS, loadScenario } from '@webpp/netem';
import { runSweep, sweepMarkdown } from '@webpp/simulator';

const outDir = new URL('../../../docs/benchmarks/', import.meta.url);
const seeds = [1, 2, 3];
const result = runSweep({ scenarios: BUILTIN_SCENARIOS.map((name) => loadScenario(name)), seeds });
const preamble =
  'Produced by `npm run bench simulator` (packages/simulator/bench/sweep.bench.ts) with the simulator (virtual time), ' +
  `seeds ${seeds.join(', ')}, the shipped scenarios and their workloads (3 clients unless the row says otherwise). ` +
  'The paper sweeps r against prediction error (Figure 5) and picks TTL from latency stability (Figure 6); here each ' +
  'parameter is judged by what it does to response time and extra requests, and r also by the prediction error.';
const markdown = sweepMarkdown(result, preamble);
mkdirSync(outDir, { recursive: true });
writeFileSync(
  new URL('sweep.json', outDir),
  `${JSON.stringify({ seeds, optimalMeanMs: result.optimalMeanMs, runs: result.runs, requestsSimulated: result.requestsSimulated, rows: result.rows }, null, 2)}\n`,
);
writeFileSync(new URL('sweep.md', outDir), markdown);
console.log(markdown);
console.log(
  `${result.runs} runs, ${result.requestsSimulated} simulated HTTP requests in ${(result.elapsedMs / 1000).toFixed(1)} s wall ` +
    `(${Math.round(result.requestsSimulated / (result.elapsedMs / 1000))} requests/s); wrote docs/benchmarks/sweep.{json,md}`,
);
