/**
 * Parameter sweep of the extended Refresh algorithm (paper Section 4.2, Figures 5 and 6):
 * r, TTL, S, T, the timeout floor, F and the number of clients sharing a table, one at a
 * time around FAST_PRESET and PAPER_DEFAULTS, on every shipped scenario, averaged over
 * three seeds. Writes docs/benchmarks/sweep.json and sweep.md.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { BUILTIN_SCENARIOS, loadScenario } from '@webpp/netem';
import { runSweep, sweepMarkdown, type SweepProgress } from '@webpp/simulator';
import { formatDuration, Progress } from '../../../e2e/bench/support/progress.js';

const outDir = new URL('../../../docs/benchmarks/', import.meta.url);
const seeds = [1, 2, 3];
// The sweep is synchronous: the status line is redrawn before each variant, on a terminal only.
const progress = new Progress({ title: 'sweep', totalUnits: 1 });
let scenarioStartedMs = performance.now();
let previous: SweepProgress | undefined;
const scenarioDone = (at: SweepProgress): void =>
  progress.complete(`${at.scenario} (${at.scenarioIndex + 1}/${at.scenarioCount}) swept in ${formatDuration(performance.now() - scenarioStartedMs)}: ${at.variantCount} variants × ${seeds.length} seeds`);
const result = runSweep({
  scenarios: BUILTIN_SCENARIOS.map((name) => loadScenario(name)),
  seeds,
  onVariant: (at) => {
    if (previous && previous.scenarioIndex !== at.scenarioIndex) {
      scenarioDone(previous);
      scenarioStartedMs = performance.now();
    }
    previous = at;
    progress.setTotal(at.scenarioCount * at.variantCount);
    progress.step(`${at.scenario} (${at.scenarioIndex + 1}/${at.scenarioCount}): ${at.base} ${at.parameter}${at.value === null ? '' : ` = ${at.value}`} (${at.variantIndex + 1}/${at.variantCount})`, 1);
  },
});
if (previous) scenarioDone(previous);
progress.close();
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
