/**
 * What the worker costs a page where it has nothing to gain (issue 26 §1): real pages with
 * their assets (e2e/fixtures/page-cost: MDN learning-area examples, HTML5 Boilerplate 5.3.0
 * and 9.0.1, the Start Bootstrap "Creative" site) and the demo gallery, served by three
 * `webpp-origin` CLI processes on loopback with no emulated distance, in real Chromium.
 *
 * Configurations per page: `no-worker`, `bare-worker` (respondWith(fetch(event.request))),
 * `webpp-warm` (the worker running) and `webpp-cold` (stopped through the DevTools protocol,
 * ServiceWorker.stopAllWorkers, before the navigation). Loads are interleaved: each round
 * loads every page once under each configuration, in an order that rotates. Measures: the
 * `load` event, Largest Contentful Paint and the last resource's responseEnd (medians), the
 * worker's start-up (Navigation Timing) and its script's evaluation (a Chromium trace).
 * Then the per-request row: one URL fetched sequentially from an uncontrolled page, through
 * a bare worker and through webpp, bound to the same server (5 KB and 50 KB).
 *
 *   npm run bench page-cost                 # one run: docs/benchmarks/page-cost.json
 *   npm run bench page-cost -- --runs 3     # medians and ranges over three runs
 *   npm run bench page-cost -- --quick      # 3 rounds, fewer requests; writes to the temp folder
 *   npm run bench page-cost -- --profile    # where the warm worker's time goes: docs/benchmarks/page-cost-profile.json
 *   npm run bench page-cost -- --path-files # the source files one request crosses: docs/benchmarks/page-cost-path-files.json
 *   npm run bench page-cost -- --per-request [--runs N] # the warm-up, then the per-request row alone; writes to the temp folder
 *   npm run bench page-cost -- --dwell-ms 0  # loads back to back (default: 1.5 s idle before each measured load)
 *
 * docs/service-worker.md ("What the worker costs a page") reads the figures.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { pathFilesOnce, profileOnce, runOnce, type RunOptions, type RunResult } from './page-cost/run.js';
import { CONFIGURATIONS } from './page-cost/measure.js';
import { PAGES } from './page-cost/site.js';
import { goals, median, pageRows, requestRows, signedMs, summary } from './page-cost/stats.js';

const repoRoot = new URL('../../', import.meta.url).pathname;
const args = process.argv.slice(2);
const quick = args.includes('--quick');
const perRequestOnly = args.includes('--per-request');
const runsFlag = args.indexOf('--runs');
const dwellFlag = args.indexOf('--dwell-ms');
/** Idle time before each measured load (run.ts, RunOptions.dwellMs); `--dwell-ms 0` loads back to back, as before 2026-11-29. */
const DWELL_MS = dwellFlag < 0 ? 1_500 : Math.max(0, Number(args[dwellFlag + 1]) || 0);
const RUNS = runsFlag < 0 ? 1 : Math.max(1, Number(args[runsFlag + 1]) || 1);
/** A safety bound: one run takes about 3–5 minutes on a shared 2-core machine, plus the dwell before each of its 392 measured loads. */
const BENCH_DEADLINE_MS = RUNS * (15 * 60_000 + 400 * DWELL_MS);
const OUT = quick ? join(tmpdir(), 'page-cost-quick.json') : join(repoRoot, 'docs/benchmarks/page-cost.json');

const runOptions: RunOptions = {
  rounds: quick ? 3 : 7,
  warmupLoads: quick ? 1 : 2,
  dwellMs: DWELL_MS,
  requestRounds: quick ? 3 : 6,
  requestsPerRound: quick ? 10 : 20,
  startupTraces: quick ? 1 : 3,
  requestRowOnly: perRequestOnly,
  log: (line) => console.log(`  ${line}`),
};

const round1 = (value: number): number => Math.round(value * 10) / 10;

function startupSummary(
  runs: readonly RunResult[],
  worker: 'webpp' | 'bare',
): { evaluate_ms: number; compile_ms: number; startup_ms: number; first_request_after_dispatch_ms: number; traces: number } {
  const all = runs.flatMap((run) => run.startup[worker]);
  return {
    evaluate_ms: round1(median(all.map((trace) => trace.evaluateMs))),
    compile_ms: round1(median(all.map((trace) => trace.compileMs))),
    startup_ms: round1(median(all.map((trace) => trace.startupMs))),
    first_request_after_dispatch_ms: round1(median(all.map((trace) => trace.firstRequestAfterDispatchMs))),
    traces: all.length,
  };
}

async function profile(): Promise<void> {
  const reports = await profileOnce({ loads: quick ? 2 : 5, fetches: quick ? 30 : 100, log: runOptions.log });
  const out = quick ? join(tmpdir(), 'page-cost-profile-quick.json') : join(repoRoot, 'docs/benchmarks/page-cost-profile.json');
  const report = { bench: 'page-cost --profile', issue: 26, date: new Date().toISOString(), load_average: loadavg().map(round1), reports };
  writeFileSync(out, `${JSON.stringify(report, null, 2)}\n`);
  for (const entry of reports) {
    console.log(`\n${entry.what}: ${entry.fetchEvents} fetch events; worker thread busy ${entry.busyPerFetchEventMs} ms and in the worker script ${entry.scriptPerFetchEventMs} ms per fetch event`);
    console.log(`  requests the worker sent per fetch event: ${entry.workerRequestsPerFetchEvent}; to URLs the page did not ask for: ${JSON.stringify(entry.workerOnlyRequests)}`);
    if (entry.phases) console.log(`  phases (median ms): page request → worker's request ${entry.phases.pageToWorkerRequestMs}, worker's request → response ${entry.phases.workerRequestToResponseMs}, worker's response → page's response ${entry.phases.workerResponseToPageResponseMs}, worker's last byte → page's last byte ${entry.phases.workerFinishToPageFinishMs}, page total ${entry.phases.pageTotalMs} (${entry.phases.requests} requests)`);
    console.log('  inclusive by source (ms per fetch event):');
    for (const [source, ms] of entry.bySourceInclusiveMs) console.log(`    ${String(ms).padStart(7)}  ${source}`);
    console.log('  self by function (ms per fetch event):');
    for (const [label, ms] of entry.byFunctionSelfMs) console.log(`    ${String(ms).padStart(7)}  ${label}`);
  }
  console.log(`wrote ${out}`);
}

/** `--path-files`: appends this build's row (labelled with `--label <name>`, default the git commit) to page-cost-path-files.json. */
async function pathFiles(): Promise<void> {
  const labelFlag = args.indexOf('--label');
  const label = labelFlag < 0 ? 'this build' : String(args[labelFlag + 1]);
  const report = await pathFilesOnce({ log: runOptions.log });
  const out = join(repoRoot, 'docs/benchmarks/page-cost-path-files.json');
  let rows: unknown[] = [];
  try {
    rows = (JSON.parse(readFileSync(out, 'utf8')) as { rows?: unknown[] }).rows ?? [];
  } catch {
    // first row
  }
  const row = { label, date: new Date().toISOString(), command: `npm run bench page-cost -- ${args.join(' ')}`.trim(), load_average: loadavg().map(round1), ...report };
  rows = [...rows.filter((existing) => (existing as { label?: string }).label !== label), row];
  writeFileSync(out, `${JSON.stringify({ bench: 'page-cost --path-files', issue: 26, rows }, null, 2)}\n`);
  console.log(`${label}: sw/src ${report.counts.sw} files, packages/core ${report.counts.core}, other ${report.counts.other}`);
  console.log(`  sw: ${report.swFiles.join(' ')}`);
  console.log(`  core: ${report.coreFiles.join(' ')}`);
  console.log(`  other: ${report.otherFiles.join(' ')}`);
  console.log(`wrote ${out}`);
}

/** The per-request row's fields of the JSON, per run but `per_request` (medians over runs). */
function requestFields(runs: readonly RunResult[]) {
  return {
    per_request: requestRows(runs),
    per_request_served_by: runs.map((run) => run.requestServedBy),
    // Per run and path (webpp, webpp-answered): the row's measured requests through webpp that its worker answered, and those it left to the browser.
    per_request_worker_counters: runs.map((run) => run.requestCounters),
    // Per run: who served the navigation of the page the row fetches from through webpp (the own origin proves the page: sw/src/direct.ts), and the loads of it that took (run.ts, ROW_PAGE_LOADS).
    per_request_page_served_by: runs.map((run) => run.requestPageServedBy),
    per_request_page_loads: runs.map((run) => run.requestPageLoads),
  };
}

function printRequestRows(runs: readonly RunResult[]): void {
  const requests = requestRows(runs);
  console.log('\nper request (sequential, median ms): size  direct  bare  webpp  webpp−direct  webpp answering  its −direct');
  for (const row of requests) console.log(`  ${row.bytes / 1024} KB  ${row.direct_ms}  ${row.bare_worker_ms}  ${row.webpp_ms}  ${signedMs(row.webpp_minus_direct_ms)}  ${row.webpp_answered_ms}  ${signedMs(row.webpp_answered_minus_direct_ms)}`);
  console.log(`served by (webpp, per run): ${JSON.stringify(runs.map((run) => run.requestServedBy))}`);
  console.log(`per-request row through webpp, answered by the worker / left to the browser (per run): ${JSON.stringify(runs.map((run) => run.requestCounters))}`);
  console.log(`the row's page navigation served by, and the loads it took (per run): ${JSON.stringify(runs.map((run) => [run.requestPageServedBy, run.requestPageLoads]))}`);
}

/** `--per-request`: the warm-up loads, then the per-request row alone (to the temp folder). */
async function perRequest(): Promise<void> {
  const runs: RunResult[] = [];
  for (let run = 0; run < RUNS; run++) {
    console.log(`run ${run + 1}/${RUNS} (load average ${loadavg().map(round1).join(' ')})`);
    runs.push(await runOnce(runOptions));
  }
  printRequestRows(runs);
  const out = join(tmpdir(), 'page-cost-per-request.json');
  const report = {
    bench: 'page-cost --per-request',
    issue: 26,
    date: new Date().toISOString(),
    load_average: loadavg().map(round1),
    ...requestFields(runs),
    worker_counters: runs.map((run) => run.workerCounters),
  };
  writeFileSync(out, `${JSON.stringify(report, null, 2)}\n`);
  console.log(`wrote ${out}`);
}

async function main(): Promise<void> {
  const deadline = setTimeout(() => {
    console.error(`page-cost bench: over ${BENCH_DEADLINE_MS / 60_000} min, stopping`);
    process.exit(2);
  }, BENCH_DEADLINE_MS);
  deadline.unref();
  const startedAt = new Date();
  const loadBefore = loadavg();
  const runs: RunResult[] = [];
  for (let run = 0; run < RUNS; run++) {
    console.log(`run ${run + 1}/${RUNS} (load average ${loadavg().map(round1).join(' ')})`);
    runs.push(await runOnce(runOptions));
  }
  const loadAfter = loadavg();
  const rows = pageRows(runs);
  const requests = requestRows(runs);
  const sum = summary(rows);
  const bundle = readFileSync(join(repoRoot, 'sw/bundle/webpp-sw.js'));
  const bundleGzipBytes = gzipSync(bundle, { level: 9 }).length;
  const goalRows = goals(sum, requests, bundleGzipBytes);
  const report = {
    bench: 'page-cost',
    issue: 26,
    date: startedAt.toISOString(),
    command: `npm run bench page-cost -- ${args.join(' ')}`.trim(),
    runs: RUNS,
    rounds_per_run: runOptions.rounds,
    dwell_ms: runOptions.dwellMs,
    cpus: cpus().length,
    load_average: { before: loadBefore.map(round1), after: loadAfter.map(round1) },
    pages: PAGES.map((page) => page.page),
    rows,
    ...requestFields(runs),
    navigations_served_by: runs.map((run) => run.navigationServedBy),
    // After the page loads (warm-up and rounds), per run: requests the webpp worker answered, and bound ones it left to the browser.
    worker_counters: runs.map((run) => run.workerCounters),
    worker_startup: { webpp: startupSummary(runs, 'webpp'), bare: startupSummary(runs, 'bare') },
    // Median over pages of the navigation's responseStart − fetchStart, per configuration: how long a worker held the page's own request.
    navigation_response_ms: Object.fromEntries(CONFIGURATIONS.map((configuration) => [configuration, round1(median(rows.filter((row) => row.configuration === configuration).map((row) => row.navigation_response_ms)))])),
    bundle: { webpp_sw_bytes: bundle.length, webpp_sw_gzip_bytes: bundleGzipBytes },
    summary: sum,
    goals: goalRows,
    runs_summary: runs.map((run) => summary(pageRows([run]))),
  };
  writeFileSync(OUT, `${JSON.stringify(report, null, 2)}\n`);

  console.log('\npage                       configuration  load ms   LCP ms  last res ms  ÷no-worker  ÷bare');
  for (const row of rows) {
    console.log(
      `${row.page.padEnd(27)}${row.configuration.padEnd(15)}${String(row.load_ms).padStart(7)}${String(row.lcp_ms).padStart(9)}${String(row.last_resource_ms).padStart(13)}${String(row.ratio_to_no_worker).padStart(12)}${String(row.ratio_to_bare_worker).padStart(7)}`,
    );
  }
  printRequestRows(runs);
  console.log(`navigations served by (webpp, recent decisions, per run): ${JSON.stringify(report.navigations_served_by)}`);
  console.log(`webpp worker after the page loads (per run): ${JSON.stringify(report.worker_counters)}`);
  console.log(`worker start-up: webpp ${JSON.stringify(report.worker_startup.webpp)}, bare ${JSON.stringify(report.worker_startup.bare)}`);
  console.log(`navigation responseStart − fetchStart (median over pages): ${JSON.stringify(report.navigation_response_ms)}`);
  console.log(`\nsummary: ${JSON.stringify(sum)}`);
  for (const goal of goalRows) console.log(`${goal.met ? 'met   ' : 'MISSED'}  ${goal.goal}: ${goal.value} (target ${goal.target})`);
  console.log(`load average before ${report.load_average.before.join(' ')}, after ${report.load_average.after.join(' ')}`);
  console.log(`wrote ${OUT}`);
}

(args.includes('--profile') ? profile() : args.includes('--path-files') ? pathFiles() : perRequestOnly ? perRequest() : main()).catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
