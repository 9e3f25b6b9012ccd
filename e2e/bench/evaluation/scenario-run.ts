/**
 * One scenario, once: the emulated cluster, every policy in Chromium at the same time, the
 * measurements, the simulator on the same compressed scenario beside it, and the rows.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Browser } from '@playwright/test';
import type { ResolvedWorkload, Scenario } from '@webpp/netem';
import { agreement, scenarioTolerance, simulateScenario } from './agreement.js';
import type { Agreement } from './agreement.js';
import { runBrowserScenario } from './browser-run.js';
import type { BrowserScenarioHooks } from './browser-run.js';
import { startBenchCluster } from './cluster.js';
import { clientDelayFromSamples } from '@webpp/simulator';
import type { ClientDelaySample } from '@webpp/simulator';
import { bestServerOracle, clientOverhead, measure } from './metrics.js';
import type { PolicyMeasurement } from './metrics.js';
import type { BenchPolicy } from './policies.js';
import { resultRows } from './rows.js';
import type { ResultRow } from './rows.js';

/** The simulator's seeds: the scenario's own and four more. */
const extraSeeds = [1, 2, 3, 4];

export interface ScenarioRunOptions {
  browser: Browser;
  name: string;
  scenario: Scenario;
  timeScale: number;
  workload: ResolvedWorkload;
  policies: readonly BenchPolicy[];
  maxRequestsPerClient: number;
  log: (line: string) => void;
  hooks: BrowserScenarioHooks;
  /** Called between the browser run and the simulation. */
  simulating: (seeds: number) => void;
  /** A folder for every request's record, or undefined. */
  rawFile: string | undefined;
}

export interface ScenarioRunResult {
  rows: ResultRow[];
  overheadMs: { medianMs: number; samples: number };
  seedSpread: number;
  untaggedRequests: number;
  seeds: (string | number)[];
  configErrors: Record<string, string[]>;
}

export async function runScenario(options: ScenarioRunOptions): Promise<ScenarioRunResult> {
  const { name, scenario, workload, policies, log } = options;
  const cluster = await startBenchCluster({ scenario, fileSizesBytes: workload.fileSizesBytes });
  let measurements: PolicyMeasurement[];
  let overheadMs: ScenarioRunResult['overheadMs'];
  let overheadSamples: ClientDelaySample[];
  let untaggedRequests: number;
  const configErrors: Record<string, string[]> = {};
  try {
    const runs = await runBrowserScenario({ browser: options.browser, cluster, policies, workload, maxRequestsPerClient: options.maxRequestsPerClient, log, hooks: options.hooks });
    const nameByOrigin = Object.fromEntries(Object.entries(cluster.origins).map(([server, origin]) => [origin, server]));
    const bestServerAt = bestServerOracle(scenario);
    measurements = runs.map((run) => measure(name, run, cluster.traffic(run.policy.name), nameByOrigin, bestServerAt));
    // From the single-server policies: one GET per page request, so each is matched with its emulated plan.
    const overhead = clientOverhead(
      runs
        .filter((run) => run.policy.name.startsWith('single-'))
        .map((run) => ({ policy: run.policy.name, records: run.records, decisions: run.worker?.decisions ?? [], traffic: cluster.traffic(run.policy.name) })),
    );
    overheadSamples = overhead.samples;
    overheadMs = { medianMs: overhead.medianMs, samples: overhead.samples.length };
    untaggedRequests = cluster.untaggedRequests();
    if (options.rawFile) {
      mkdirSync(resolve(options.rawFile, '..'), { recursive: true });
      writeFileSync(options.rawFile, JSON.stringify({ overheadSamples, runs: runs.map((run) => ({ policy: run.policy.name, records: run.records, worker: run.worker })) }));
    }
    for (const run of runs) if (run.configErrors.length > 0) configErrors[run.policy.name] = run.configErrors;
  } finally {
    await cluster.close();
  }
  for (const m of measurements) {
    if (m.missingDecisions > 0) log(`  ERROR: ${m.policy}: ${m.missingDecisions} page requests without a worker decision event: its extra-request count is partial`);
    if (configErrors[m.policy]) log(`  warning: ${m.policy}: worker config errors: ${configErrors[m.policy]!.join('; ')}`);
  }

  const seeds = [scenario.seed ?? 0, ...extraSeeds];
  options.simulating(seeds.length);
  const simulated = simulateScenario({
    scenario,
    policies,
    workload: {
      clients: workload.clients,
      fileSizesBytes: workload.fileSizesBytes,
      durationMs: workload.durationMs,
      requestsPerClient: options.maxRequestsPerClient,
      requestTimeoutMs: workload.requestTimeoutMs,
      failurePauseMs: workload.failurePauseMs,
      thinkTimeMs: workload.thinkTimeMs,
    },
    clientDelay: clientDelayFromSamples(overheadSamples),
    seeds,
  });
  const tolerance = scenarioTolerance(simulated);
  const complete = measurements.find((m) => m.policy === 'optimal-complete')!;
  const agreements = new Map<string, Agreement>();
  for (const m of measurements) {
    const sim = simulated.find((s) => s.policy === m.policy)!;
    agreements.set(m.policy, agreement({ relativeToOptimal: m.meanMs / complete.meanMs, extraRequestsPct: m.extraRequestsPct, failed: m.failed }, sim, tolerance));
  }
  const rows = resultRows(measurements, simulated, agreements, tolerance, options.timeScale);
  return { rows, overheadMs, seedSpread: tolerance.seedSpread, untaggedRequests, seeds, configErrors };
}

/** One console line per row. */
export function rowLine(row: ResultRow): string {
  return (
    `  ${row.policy.padEnd(17)} n=${String(row.requests).padStart(5)} mean ${row.mean_ms.toFixed(1).padStart(7)} ms  p95 ${row.p95_ms.toFixed(1).padStart(7)}  ` +
    `÷opt ${row.relative_to_optimal.toFixed(3)} p95 ${row.relative_p95_to_optimal.toFixed(3)} (sim ${row.sim_relative_to_optimal.toFixed(3)}${row.agrees_relative_to_optimal ? '' : ' ✗'})  ` +
    `extra ${row.extra_requests_pct}% (servers ${row.extra_requests_pct_server}%, sim ${row.sim_extra_requests_pct}%)  failed ${row.failed_requests} (sim ${row.sim_failed_requests})` +
    (row.missing_decisions > 0 ? `  MISSING DECISIONS ${row.missing_decisions}` : '')
  );
}
