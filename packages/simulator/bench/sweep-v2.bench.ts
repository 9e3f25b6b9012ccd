/**
 * Sweep of the `webpp` policy's main options (issue 11): hedgeQuantile, hedgeBudgetShare,
 * estimateHalfLifeMs and refreshBudgetShare, one at a time around their defaults
 * (packages/core/src/policies/webpp/options.ts), in the simulator, on every shipped scenario
 * as the browser evaluation runs it (each fitted to 60 s, one client, 15 ms of per-request
 * time beyond the link, about what the browser measured), five seeds each.
 *
 *   npm run bench sweep-v2
 *
 * Writes docs/benchmarks/sweep-v2.json, sweep-v2.md and sweep-v2.svg (one plot: where the
 * defaults sit on the tradeoff between extra requests and time relative to optimal).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { WEBPP_DEFAULTS } from '@webpp/core';
import { BUILTIN_SCENARIOS, loadScenario, scaleScenarioTime } from '@webpp/netem';
import { policySweepMarkdown, policySweepSvg, registryPolicy, runPolicySweep } from '@webpp/simulator';
import { Progress } from '../../../e2e/bench/support/progress.js';

const outDir = new URL('../../../docs/benchmarks/', import.meta.url);
const SCENARIO_SECONDS = 60;
const SERVICE_MS = 15;
const seeds = [1, 2, 3, 4, 5];
const values = {
  hedgeQuantile: [0.5, 0.75, 0.9, 0.95, 0.99],
  hedgeBudgetShare: [0, 0.01, 0.03, 0.05, 0.1, 0.2],
  estimateHalfLifeMs: [1_000, 3_000, 7_000, 15_000, 30_000, 60_000],
  refreshBudgetShare: [0, 0.005, 0.015, 0.03, 0.06, 0.1],
};
const defaults = Object.fromEntries(Object.keys(values).map((name) => [name, WEBPP_DEFAULTS[name as keyof typeof values]]));

const scenarios = BUILTIN_SCENARIOS.map((name) => {
  const scenario = loadScenario(name);
  return scaleScenarioTime(scenario, Math.min(1, (SCENARIO_SECONDS * 1000) / scenario.durationMs));
});
const progress = new Progress({ title: 'sweep-v2', totalUnits: 1 });
const result = runPolicySweep({
  scenarios,
  policy: (options) => registryPolicy('webpp', options, 'webpp'),
  defaults,
  values,
  seeds,
  workload: { clients: 1 },
  serviceMs: SERVICE_MS,
  onVariant: ({ parameter, value, index, count }) => {
    progress.setTotal(count);
    progress.step(`${parameter}${value === null ? '' : ` = ${value}`} (${index + 1}/${count})`, 1);
  },
});
progress.close();
const preamble =
  'Produced by `npm run bench sweep-v2` (packages/simulator/bench/sweep-v2.bench.ts) with the simulator (virtual time, core\'s client engine and ' +
  `the registry's \`webpp\` policy), on every shipped scenario as the browser evaluation runs it: fitted to ${SCENARIO_SECONDS} s, one client, ` +
  `${SERVICE_MS} ms of per-request time beyond the link, seeds ${seeds.join(', ')}. Ratios are against \`optimal-complete\` (every replica at once, ` +
  'the first complete body wins), per scenario the mean over seeds, then the mean over scenarios; extra requests are every HTTP request beyond one ' +
  'per request, over all runs of a row.';
mkdirSync(outDir, { recursive: true });
writeFileSync(new URL('sweep-v2.json', outDir), `${JSON.stringify({ scenarioSeconds: SCENARIO_SECONDS, serviceMs: SERVICE_MS, seeds, defaults, values, runs: result.runs, rows: result.rows }, null, 1)}\n`);
writeFileSync(new URL('sweep-v2.md', outDir), policySweepMarkdown(result, defaults, preamble));
writeFileSync(new URL('sweep-v2.svg', outDir), policySweepSvg(result, defaults));
const base = result.rows.find((row) => row.scenario === 'all' && row.is_default)!;
console.log(`defaults: ÷ optimal ${base.relative_to_optimal} (worst ${base.worst_scenario} ${base.worst_relative_to_optimal}), extra requests ${base.extra_requests_pct}%`);
console.log(`${result.runs} runs in ${(result.elapsedMs / 1000).toFixed(1)} s; wrote docs/benchmarks/sweep-v2.{json,md,svg}`);
