/**
 * Herding (issue 13 §4; Fei et al., INFOCOM 1998, Figures 9–10), in the simulator: 1 000 and
 * 10 000 clients, each with its own engine and policy, against 3 and 10 servers of finite
 * capacity (M/M/c, packages/simulator/src/server-queue.ts), with `paper`, the webpp default
 * without sets and push, the default with them, `random`, Fei's tight thresholds and
 * variants that tell push, sets, the load spread and its inertia apart; 3 seeds each. Then the single-client check: every shipped scenario
 * with one client, webpp with and without sets and push.
 *
 *   npm run bench herding
 *
 * Writes docs/benchmarks/herding.json (rows with source "simulator"; rows of other sources,
 * e.g. the Chromium bench's, are kept) and docs/benchmarks/herding-<clients>x<servers>.svg.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { BUILTIN_SCENARIOS, loadScenario, scaleScenarioTime } from '@webpp/netem';
import { herdingSvg, registryPolicy, runHerding, simulate, type HerdingRow } from '@webpp/simulator';
import { Progress } from '../../../e2e/bench/support/progress.js';

const outDir = new URL('../../../docs/benchmarks/', import.meta.url);
const FOUR = ['paper', 'webpp-no-sets', 'webpp', 'random'];
const configs = [
  { clients: 1_000, servers: 3, policies: [...FOUR, 'webpp-tight', 'webpp-no-spread', 'webpp-no-inertia', 'webpp-no-steer', 'webpp-no-push'] },
  { clients: 1_000, servers: 10, policies: [...FOUR, 'webpp-tight', 'webpp-no-spread', 'webpp-no-inertia', 'webpp-no-steer', 'webpp-no-push'] },
  { clients: 10_000, servers: 3, policies: [...FOUR, 'webpp-tight', 'webpp-no-spread', 'webpp-no-inertia'] },
  { clients: 10_000, servers: 10, policies: [...FOUR, 'webpp-no-spread'] },
];
/** Three seeds per row: the row gives the median of each figure and its range. */
const SEEDS = [1, 2, 3];
const started = Date.now();
const progress = new Progress({ title: 'herding', totalUnits: configs.reduce((sum, c) => sum + c.clients * c.policies.length * SEEDS.length, 0) });
// Single-client quality (issue 13 goal): the shipped scenarios as sweep-v2 runs them.
const single: Array<{ scenario: string; seed: number; with_sets_ms: number; without_ms: number }> = [];
for (const name of BUILTIN_SCENARIOS) {
  const scenario = loadScenario(name);
  const fitted = scaleScenarioTime(scenario, Math.min(1, 60_000 / scenario.durationMs));
  for (const seed of [1, 2, 3]) {
    const run = (options: Record<string, unknown>): number => simulate({ scenario: fitted, policy: registryPolicy('webpp', options), seed, workload: { clients: 1 }, serviceMs: 15 }).responseTime.meanMs;
    single.push({ scenario: name, seed, with_sets_ms: round(run({})), without_ms: round(run({ equivalentSetJoinRatio: 0, equivalentSetLeaveRatio: 0, pushMaxAgeMs: 0 })) });
  }
}
type Row = Omit<HerdingRow, 'load'> & { runs: number; mean_ms_range: [number, number]; p95_ms_range: [number, number]; load_cv_range: [number, number] };
const rows: Row[] = [];
for (const config of configs) {
  const plotted: HerdingRow[] = [];
  for (const policy of config.policies) {
    const runs: HerdingRow[] = [];
    for (const seed of SEEDS) {
      progress.step(`${config.clients} clients × ${config.servers} servers: ${policy}, seed ${seed}`, config.clients);
      const t0 = Date.now();
      const { row } = runHerding({ clients: config.clients, servers: config.servers, policy, seed });
      runs.push(row);
      progress.complete(`${config.clients}×${config.servers} ${policy} seed ${seed}: mean ${row.mean_ms} ms, p95 ${row.p95_ms} ms, load_cv ${row.load_cv}, extra ${row.extra_requests_pct}% (${((Date.now() - t0) / 1000).toFixed(0)} s)`);
    }
    plotted.push(runs[0] as HerdingRow);
    rows.push(medianRow(runs));
  }
  writeFileSync(new URL(`herding-${config.clients}x${config.servers}.svg`, outDir), herdingSvg(plotted, `Herding in the simulator: ${config.clients} clients, ${config.servers} servers (M/M/c, ρ = 0.5 if spread evenly; seed 1)`));
  writeResults(single); // so far (a long run stopped half-way keeps what it measured)
}

progress.close();

for (const row of rows) console.log(`${row.clients}\t${row.servers}\t${row.policy}\tmean ${row.mean_ms} ${JSON.stringify(row.mean_ms_range)}\tp95 ${row.p95_ms}\tload_cv ${row.load_cv} ${JSON.stringify(row.load_cv_range)}\textra ${row.extra_requests_pct}%\tfailed ${row.failed}`);
const ratio = single.reduce((sum, row) => sum + row.with_sets_ms / row.without_ms, 0) / single.length;
console.log(`single client, ${single.length} runs: mean with sets and push ÷ without = ${ratio.toFixed(3)}`);

/** The median of each figure over the seeds, with its range; counts summed. */
function medianRow(runs: readonly HerdingRow[]): Row {
  const median = (pick: (row: HerdingRow) => number): number => {
    const values = runs.map(pick).sort((a, b) => a - b);
    return values[Math.floor(values.length / 2)] as number;
  };
  const range = (pick: (row: HerdingRow) => number): [number, number] => [Math.min(...runs.map(pick)), Math.max(...runs.map(pick))];
  const { load: _load, ...first } = runs[0] as HerdingRow;
  return {
    ...first,
    mean_ms: median((row) => row.mean_ms),
    p95_ms: median((row) => row.p95_ms),
    load_cv: median((row) => row.load_cv),
    extra_requests_pct: median((row) => row.extra_requests_pct),
    requests: runs.reduce((sum, row) => sum + row.requests, 0),
    failed: runs.reduce((sum, row) => sum + row.failed, 0),
    runs: runs.length,
    mean_ms_range: range((row) => row.mean_ms),
    p95_ms_range: range((row) => row.p95_ms),
    load_cv_range: range((row) => row.load_cv),
  };
}

function writeResults(singleClient: typeof single): void {
  const file = new URL('herding.json', outDir);
  const kept = existsSync(file) ? ((JSON.parse(readFileSync(file, 'utf8')) as { rows?: Array<{ source?: string }> }).rows ?? []).filter((row) => row.source !== 'simulator') : [];
  mkdirSync(outDir, { recursive: true });
  const model =
    'M/M/c FCFS per server (c = 4), closed-loop clients (think time 5 s, starting over the first 20 s), 8 KiB responses, server i at 30 + 20·i ms round trip, ρ = 0.5 if spread evenly; 120 s, the first 40 s left out; 3 seeds, median and range';
  const simulator = { command: 'npm run bench herding', model, wallSeconds: Math.round((Date.now() - started) / 1000), single_client: singleClient };
  writeFileSync(file, `${JSON.stringify({ simulator, rows: [...kept, ...rows] }, null, 1)}\n`);
}

function round(value: number): number {
  return Math.round(value * 10) / 10;
}
