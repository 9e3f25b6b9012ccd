/**
 * Herding in real Chromium (issue 13 §5; Fei et al., INFOCOM 1998, Figures 9–10): many
 * browser contexts at once, each its own client with its own worker, load images from three
 * real @webpp/origin replicas behind netem links at different distances. Every server has a
 * finite capacity (herding/capacity-cluster.ts): if every client takes the single nearest
 * server it saturates, everyone measures it slow and moves on together. The same workload
 * runs with the webpp policy without push and sets (`webpp-no-sets`), with them (`webpp`,
 * the default: pushed service times calibrated as A = R/S, equivalent-server sets τ_join 0.1
 * / τ_leave 0.4), and `random`, each on a fresh cluster.
 *
 * Reports per policy the clients' mean and p95 response time, load_cv (as the simulator
 * defines it) and each server's share of requests over time; with --runs 3, the median and
 * range over the runs. Writes docs/benchmarks/herding-chromium.json (every run, with the
 * per-second arrivals), herding-chromium.svg (load over time, first run) and merges its rows (`source: "chromium"`) into
 * docs/benchmarks/herding.json beside the simulator's.
 *
 *   npm run bench herding -- [--clients 10] [--duration-s 40] [--think-ms 100] [--runs 1]
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { chromium } from '@playwright/test';
import { chromiumLaunchOptions } from '../support/chromium.js';
import { arrivalsPerBin, startCapacityCluster } from './herding/capacity-cluster.js';
import { runClients } from './herding/browser-clients.js';
import { loadCv } from '@webpp/simulator';
import { mean, median, percentile, sharesOverTime } from './herding/herd-metrics.js';
import { loadOverTimeSvg } from './herding/load-plot.js';

const repoRoot = new URL('../../', import.meta.url).pathname;

function flag(name: string, fallback: number): number {
  const index = process.argv.indexOf(`--${name}`);
  const value = index < 0 ? undefined : Number(process.argv[index + 1]);
  return value !== undefined && Number.isFinite(value) && value > 0 ? value : fallback;
}

const CLIENTS = flag('clients', 10);
const DURATION_MS = flag('duration-s', 40) * 1_000;
const RUNS = flag('runs', 1);
/** Left out of mean, p95 and load_cv: clients' tables still cold. */
const WARM_UP_MS = 5_000;
const BIN_MS = 1_000;
/** Distances: a near, b middle, c far (round trips through netem). */
const DELAYS_MS = { a: 10, b: 30, c: 50 };
/** Capacity: 2 requests in service at once, 40 ms of work each → 50 requests/s per server. */
const WORKERS = 2;
const WORK_MS = 40;
const THINK_TIME_MS = flag('think-ms', 100);
const BENCH_DEADLINE_MS = 40 * 60_000;

/**
 * The worker's settings per policy, as page-script parameters (names as the simulator's
 * HERDING_POLICIES); the webpp policy's constants through internal overrides (`_name`).
 */
const POLICIES: Record<string, Record<string, string | number>> = {
  'webpp-no-sets': { policy: 'webpp', _equivalentSetJoinRatio: 0, _equivalentSetLeaveRatio: 0, _pushMaxAgeMs: 0 },
  'webpp-no-spread': { policy: 'webpp', _loadSpreadShare: 0 },
  webpp: { policy: 'webpp' },
  random: { policy: 'random' },
};

interface RunResult {
  policy: string;
  run: number;
  mean_ms: number;
  p95_ms: number;
  load_cv: number;
  requests: number;
  failed: number;
  /** Each server's share of the image requests, per 2 s. */
  shares: Record<string, number[]>;
  /** Image requests each server received per second. */
  load: Record<string, number[]>;
}

async function runOnce(browser: import('@playwright/test').Browser, policy: string, run: number): Promise<RunResult> {
  const cluster = await startCapacityCluster({ delaysMs: DELAYS_MS, workers: WORKERS, workMs: WORK_MS });
  try {
    cluster.workerParams = POLICIES[policy] ?? {};
    const { records, startAtMs, endAtMs } = await runClients({
      browser,
      cluster,
      count: CLIENTS,
      durationMs: DURATION_MS,
      thinkTimeMs: THINK_TIME_MS,
      maxRequestsPerClient: Math.ceil(DURATION_MS / THINK_TIME_MS),
      requestTimeoutMs: 10_000,
    });
    const measured = records.filter((record) => record.startMs >= WARM_UP_MS);
    const times = measured.filter((record) => record.ok).map((record) => record.responseMs);
    const load = arrivalsPerBin(cluster, startAtMs, endAtMs, BIN_MS);
    return {
      policy,
      run,
      mean_ms: Math.round(mean(times) * 10) / 10,
      p95_ms: Math.round(percentile(times, 0.95) * 10) / 10,
      load_cv: Math.round(loadCv(load, WARM_UP_MS / BIN_MS, DURATION_MS / BIN_MS) * 1000) / 1000,
      requests: measured.length,
      failed: measured.filter((record) => !record.ok).length,
      shares: sharesOverTime(load, 2),
      load,
    };
  } finally {
    await cluster.stop();
  }
}

/** The simulator's rows and ours in one file: rows of other sources are kept. */
function mergeRows(rows: object[]): void {
  const file = `${repoRoot}docs/benchmarks/herding.json`;
  const existing: unknown = existsSync(file) ? JSON.parse(readFileSync(file, 'utf8')) : { rows: [] };
  const isRow = (row: unknown): boolean => (row as { source?: string }).source !== 'chromium';
  if (Array.isArray(existing)) {
    writeFileSync(file, `${JSON.stringify([...existing.filter(isRow), ...rows], null, 2)}\n`);
  } else {
    const document = existing as { rows?: unknown[] };
    writeFileSync(file, `${JSON.stringify({ ...document, rows: [...(document.rows ?? []).filter(isRow), ...rows] }, null, 2)}\n`);
  }
}

function shareLine(result: RunResult): string {
  return Object.entries(result.shares)
    .map(([server, shares]) => `${server}: ${shares.map((share) => String(Math.round(share * 100)).padStart(3)).join('')}`)
    .join('\n      ');
}

async function main(): Promise<void> {
  const deadline = setTimeout(() => {
    console.error(`herding bench: over ${BENCH_DEADLINE_MS / 60_000} min, stopping`);
    process.exit(2);
  }, BENCH_DEADLINE_MS);
  deadline.unref();
  console.log(`${CLIENTS} browser clients, 3 servers (RTT ${JSON.stringify(DELAYS_MS)} ms; ${WORKERS} at once × ${WORK_MS} ms work = ${(WORKERS / WORK_MS) * 1000} req/s each), ${DURATION_MS / 1000} s, think ${THINK_TIME_MS} ms, ${RUNS} run(s)`);
  const browser = await chromium.launch(chromiumLaunchOptions);
  const results: RunResult[] = [];
  try {
    for (let run = 1; run <= RUNS; run++) {
      for (const policy of Object.keys(POLICIES)) {
        const started = Date.now();
        const result = await runOnce(browser, policy, run);
        results.push(result);
        console.log(`  run ${run} ${policy.padEnd(14)} mean ${result.mean_ms} ms  p95 ${result.p95_ms} ms  load_cv ${result.load_cv}  requests ${result.requests} (${result.failed} failed)  [${Math.round((Date.now() - started) / 1000)} s]`);
        console.log(`      share of requests per 2 s (%):\n      ${shareLine(result)}`);
      }
    }
  } finally {
    await browser.close();
  }
  const rows = Object.keys(POLICIES).map((policy) => {
    const mine = results.filter((result) => result.policy === policy);
    const range = (pick: (result: RunResult) => number): [number, number] => [Math.min(...mine.map(pick)), Math.max(...mine.map(pick))];
    return {
      clients: CLIENTS,
      servers: 3,
      policy,
      mean_ms: median(mine.map((result) => result.mean_ms)),
      p95_ms: median(mine.map((result) => result.p95_ms)),
      load_cv: median(mine.map((result) => result.load_cv)),
      source: 'chromium',
      runs: mine.length,
      ...(mine.length > 1 ? { mean_ms_range: range((r) => r.mean_ms), p95_ms_range: range((r) => r.p95_ms), load_cv_range: range((r) => r.load_cv) } : {}),
      requests: median(mine.map((result) => result.requests)),
      failed: median(mine.map((result) => result.failed)),
    };
  });
  const setup = { clients: CLIENTS, servers: 3, delaysMs: DELAYS_MS, workers: WORKERS, workMs: WORK_MS, thinkTimeMs: THINK_TIME_MS, durationMs: DURATION_MS, warmUpMs: WARM_UP_MS, binMs: BIN_MS };
  writeFileSync(`${repoRoot}docs/benchmarks/herding-chromium.json`, `${JSON.stringify({ generatedAt: new Date().toISOString(), setup, rows, runs: results }, null, 2)}\n`);
  mergeRows(rows);
  // The first run of each policy, as Fei's Figures 9 and 10 show one run.
  const firstRuns = Object.keys(POLICIES).flatMap((policy) => results.filter((result) => result.policy === policy && result.run === 1));
  writeFileSync(`${repoRoot}docs/benchmarks/herding-chromium.svg`, loadOverTimeSvg(firstRuns.map((result) => ({ title: `${result.policy} (load_cv ${result.load_cv})`, load: result.load, binMs: BIN_MS }))));
  console.log('\npolicy          mean ms   p95 ms   load_cv');
  for (const row of rows) console.log(`${row.policy.padEnd(15)} ${String(row.mean_ms).padStart(7)}  ${String(row.p95_ms).padStart(7)}  ${String(row.load_cv).padStart(8)}`);
  console.log('wrote docs/benchmarks/herding-chromium.json, herding-chromium.svg and the chromium rows of docs/benchmarks/herding.json');
}

await main();
