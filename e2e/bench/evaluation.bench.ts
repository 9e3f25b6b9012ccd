/**
 * The paper's experiment (Section 6) in real Chromium, issues 7 and 11: every replica-selection
 * policy, at the same time, on each emulated-network scenario; then the simulator on the same
 * compressed scenarios for the agreement check. Run it three times for medians and ranges:
 *
 *   npm run bench evaluation -- --runs 3
 *
 * Options: e2e/bench/evaluation/options.ts (--runs, WEBPP_EVAL_SCENARIO_SECONDS, …).
 *
 * Writes results.json (one row per scenario and policy: medians over the runs, with ranges),
 * results-runs.json (every run's rows), results.md, relative-to-optimal.svg,
 * relative-p95-to-optimal.svg and browser-vs-simulator.svg, after every run (so a stopped
 * bench leaves the runs done so far). A page request without a worker decision event makes
 * the extra-request counts partial: the bench then writes results-incomplete.* instead and
 * exits with status 1. On a terminal, a status line shows the scenario, the policy being set
 * up or the run's progress, and the time left.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { resolve } from 'node:path';
import { chromium } from '@playwright/test';
import { loadScenario, resolveWorkload, scaleScenarioTime } from '@webpp/netem';
import { chromiumLaunchOptions } from '../support/chromium.js';
import { agreementRows, goalLines } from './evaluation/goals.js';
import { evaluationOptions, timeScaleFor } from './evaluation/options.js';
import { browserVsSimulatorSvg, relativeToOptimalSvg } from './evaluation/plots.js';
import { withDefaultPolicy } from './evaluation/default-policy.js';
import { engineLabel } from './evaluation/engine-label.js';
import { benchPolicies } from './evaluation/policies.js';
import { resultsMarkdown } from './evaluation/report.js';
import type { RunInfo } from './evaluation/report.js';
import { withGains } from './evaluation/rows.js';
import type { ResultRow } from './evaluation/rows.js';
import { aggregateRuns, median } from './evaluation/runs.js';
import { EvaluationProgress } from './evaluation/run-progress.js';
import { rowLine, runScenario } from './evaluation/scenario-run.js';

const root = new URL('../../', import.meta.url).pathname;
const options = evaluationOptions(process.argv.slice(2), process.env, (path) => resolve(root, path));
/** A safety bound only: the workload is bounded by scenario time. */
const MAX_REQUESTS_PER_CLIENT = 2_000;
/** Both baselines always run: optimal-complete is every ratio's denominator. */
const BASELINES = ['optimal', 'optimal-complete'];

/** Every scenario with its policies, known up front so that progress can tell the time left. */
const plans = options.scenarios.map((name) => {
  const original = loadScenario(name);
  const timeScale = timeScaleFor(options, original.durationMs);
  const scenario = scaleScenarioTime(original, timeScale);
  const workload = resolveWorkload(scenario, { clients: options.clients });
  const policies = withDefaultPolicy(benchPolicies(Object.keys(scenario.servers))).filter((policy) => !options.policies || BASELINES.includes(policy.name) || options.policies.includes(policy.name));
  return { name, scenario, timeScale, workload, policies };
});
const steps = Array.from({ length: options.runs }, (_, run) => plans.map((plan) => ({ ...plan, run }))).flat();
const progress = new EvaluationProgress(
  steps.map(({ name, run, workload, policies }) => ({ name: options.runs > 1 ? `${name}, run ${run + 1}/${options.runs}` : name, policies: policies.length, durationMs: workload.durationMs })),
);
const log = (line: string): void => progress.log(line);

const engine = engineLabel(root);
const descriptions: Record<string, string> = {};
for (const plan of plans) for (const policy of plan.policies) descriptions[policy.name] = policy.description;
const runRows: ResultRow[][] = [];
const runInfos: RunInfo['runs'] = [];
const overheads: Record<string, { medianMs: number; samples: number }[]> = {};
const seedSpreads: Record<string, number[]> = {};
const untagged: Record<string, number> = {};
let simulatorSeeds: (string | number)[] = [];
let missingDecisions = 0;

progress.launchingBrowser();
const browser = await chromium.launch(chromiumLaunchOptions);
const chromiumVersion = browser.version();
try {
  for (let run = 0; run < options.runs; run++) {
    const startedAt = new Date();
    const startedMs = performance.now();
    const loadAverage = loadavg().map((value) => value.toFixed(2)).join(', ');
    const rows: ResultRow[] = [];
    for (const [index, plan] of plans.entries()) {
      const step = run * plans.length + index;
      log(`\n${plan.name}${options.runs > 1 ? ` (run ${run + 1}/${options.runs})` : ''}: ${plan.policies.length} policies × ${plan.workload.clients} clients for ${plan.workload.durationMs / 1000} s (time scale ${plan.timeScale})`);
      const result = await runScenario({
        browser,
        name: plan.name,
        scenario: plan.scenario,
        timeScale: Math.round(plan.timeScale * 1000) / 1000,
        workload: plan.workload,
        policies: plan.policies,
        maxRequestsPerClient: MAX_REQUESTS_PER_CLIENT,
        log,
        hooks: progress.scenarioHooks(step),
        simulating: (seeds) => progress.simulating(step, seeds),
        rawFile: options.rawDir ? resolve(options.rawDir, `raw-${plan.name}-run${run + 1}.json`) : undefined,
      });
      for (const row of result.rows) log(rowLine(row));
      log(`  overhead beyond the emulated link: ${result.overheadMs.medianMs.toFixed(1)} ms (median of ${result.overheadMs.samples})`);
      rows.push(...result.rows);
      (overheads[plan.name] ??= []).push(result.overheadMs);
      (seedSpreads[plan.name] ??= []).push(result.seedSpread);
      untagged[plan.name] = (untagged[plan.name] ?? 0) + result.untaggedRequests;
      simulatorSeeds = result.seeds;
      missingDecisions += result.rows.reduce((sum, row) => sum + row.missing_decisions, 0);
      progress.scenarioDone(step, result.rows);
    }
    const withGain = withGains(rows);
    runRows.push(withGain);
    const compared = agreementRows(withGain);
    runInfos.push({
      startedAt: startedAt.toISOString(),
      wallSeconds: (performance.now() - startedMs) / 1000,
      loadAverage,
      agreeing: compared.filter((row) => row.agrees_relative_to_optimal).length,
      compared: compared.length,
      missingDecisions: withGain.reduce((sum, row) => sum + row.missing_decisions, 0),
    });
    writeOutputs();
  }
} finally {
  progress.close();
  await browser.close();
}

function writeOutputs(): void {
  const rows = aggregateRuns(runRows);
  const info: RunInfo = {
    runs: runInfos,
    command: options.command,
    engine,
    clients: options.clients,
    maxRequestsPerClient: MAX_REQUESTS_PER_CLIENT,
    chromium: chromiumVersion,
    scenarios: Object.fromEntries(plans.map((plan) => [plan.name, { timeScale: Math.round(plan.timeScale * 1000) / 1000, seconds: plan.workload.durationMs / 1000, fileSizesBytes: plan.workload.fileSizesBytes }])),
    overheadMs: Object.fromEntries(
      Object.entries(overheads).map(([name, list]) => [name, { medianMs: median(list.map((o) => o.medianMs)), samples: Math.round(median(list.map((o) => o.samples))) }]),
    ),
    seedSpread: Object.fromEntries(Object.entries(seedSpreads).map(([name, list]) => [name, median(list)])),
    simulatorSeeds,
    untaggedRequests: untagged,
  };
  // Partial extra-request counts must not replace good figures: they go beside them, named as such.
  const base = missingDecisions > 0 ? 'results-incomplete' : 'results';
  const names = options.scenarios;
  mkdirSync(options.outDir, { recursive: true });
  writeFileSync(resolve(options.outDir, `${base}.json`), `${JSON.stringify(rows, null, 2)}\n`);
  writeFileSync(resolve(options.outDir, `${base}-runs.json`), `${JSON.stringify({ info, runs: runRows }, null, 1)}\n`);
  writeFileSync(resolve(options.outDir, `${base}.md`), resultsMarkdown(rows, names, info, descriptions));
  if (missingDecisions > 0) return;
  writeFileSync(resolve(options.outDir, 'relative-to-optimal.svg'), relativeToOptimalSvg(rows, names));
  writeFileSync(resolve(options.outDir, 'relative-p95-to-optimal.svg'), relativeToOptimalSvg(rows, names, 'relative_p95_to_optimal'));
  writeFileSync(resolve(options.outDir, 'browser-vs-simulator.svg'), browserVsSimulatorSvg(rows));
}

const final = aggregateRuns(runRows);
log(`\nGoals (issue 11), ${runRows.length} run${runRows.length === 1 ? '' : 's'}:`);
for (const line of goalLines(final)) log(line);
const wallSeconds = runInfos.reduce((sum, run) => sum + run.wallSeconds, 0);
if (missingDecisions > 0) {
  log(`\nFAILED: ${missingDecisions} page requests had no worker decision event, so the extra-request counts are partial. Wrote ${options.outDir}/results-incomplete.* only.`);
  process.exitCode = 1;
} else {
  log(`\nwrote ${options.outDir}/results.{json,md}, results-runs.json, relative-to-optimal.svg, relative-p95-to-optimal.svg, browser-vs-simulator.svg (${Math.round(wallSeconds)} s)`);
}
