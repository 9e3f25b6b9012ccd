/**
 * Cost of pre-processing (paper Section 5: the servlet added 13.6% service time without
 * caching; goal here: under 5% throughput loss with the cache warm).
 *
 * 1. Throughput, same 50 KB HTML page, same machine, same run, judged like for like:
 *    - disk with disk: plain @fastify/static vs the plugin with injection off (only the
 *      bindings header is added; the body streams from disk exactly as with @fastify/static);
 *    - memory with memory: plain Fastify answering from a Buffer vs the plugin's defaults
 *      (bindings + script injection: the rewritten page is served from the cache);
 *    - and the plugin with the cache disabled, against @fastify/static.
 *    Each server runs in its own process. A run warms every server with the same number of
 *    requests, then measures several rounds; in each round every mode is measured right next
 *    to its baseline (the order reverses every round), and the throughput ratio is taken
 *    within the round, so the slow drifts of a shared machine's load cancel out. Server
 *    and load-generator CPU time per request are reported too. Three runs (fresh servers
 *    each): median and range of the runs' medians. All loopback, bounded.
 * 2. Cold pre-processing time (parse + match + encode + inject) for 10 KB, 100 KB, 1 MB pages.
 *
 * Writes docs/benchmarks/origin-preprocess.json.
 */
import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ReplicationDirectory } from '../src/directory/replication-directory.js';
import { directoryPairsFrom } from '../src/directory/directory-file.js';
import { preprocessBody } from '../src/bindings/preprocess.js';
import { load, median, spread, startServer, type BenchServer, type LoadResult } from './ab-load.js';
import { benchDirectory, benchPage } from './page.js';

const RUNS = Number(process.env.WEBPP_BENCH_RUNS ?? 3);
const ROUNDS = Number(process.env.WEBPP_BENCH_ROUNDS ?? 5);
const DURATION_S = Number(process.env.WEBPP_BENCH_DURATION_S ?? 4);
const WARMUP_REQUESTS = Number(process.env.WEBPP_BENCH_WARMUP_REQUESTS ?? 2000);
const CONNECTIONS = 10;
const OUTPUT = fileURLToPath(new URL('../../docs/benchmarks/origin-preprocess.json', import.meta.url));

/** In this order, each mode next to its baseline; odd rounds run it reversed. */
const MODES = ['static', 'webpp-noinject', 'memory', 'webpp', 'webpp-nocache'] as const;
type Mode = (typeof MODES)[number];
/** Like-for-like comparisons: [mode, baseline]. */
const COMPARISONS = {
  headerOnlyVsStatic: ['webpp-noinject', 'static'],
  defaultsVsMemory: ['webpp', 'memory'],
  defaultsVsStatic: ['webpp', 'static'],
  noCacheVsStatic: ['webpp-nocache', 'static'],
} as const satisfies Record<string, readonly [Mode, Mode]>;
type Comparison = keyof typeof COMPARISONS;

interface RunResult {
  results: Record<Mode, LoadResult[]>;
  /** Per comparison: the throughput and server-CPU ratios of each round. */
  ratios: Record<Comparison, { throughput: number[]; cpu: number[] }>;
}

async function oneRun(root: string, check: Record<string, unknown>): Promise<RunResult> {
  const servers = new Map<Mode, BenchServer>();
  const results = Object.fromEntries(MODES.map((mode) => [mode, []])) as unknown as Record<Mode, LoadResult[]>;
  const port = (mode: Mode): number => servers.get(mode)?.port as number;
  try {
    // One at a time: five tsx start-ups at once on a loaded 2-core machine can outlast the ready timeout.
    for (const mode of MODES) servers.set(mode, await startServer(mode, root));
    // Sanity: the plugin really pre-processes (bindings header, injected script).
    const probe = await fetch(`http://127.0.0.1:${port('webpp')}/index.html`);
    const body = await probe.text();
    check.bindingsHeaderBytes = probe.headers.get('webpp-bindings')?.length ?? 0;
    check.injected = body.includes('<script src="/webpp.js" async></script>');
    if (check.bindingsHeaderBytes === 0 || check.injected !== true) throw new Error('the webpp server did not pre-process the page');
    for (const mode of MODES) await load(port(mode), { connections: CONNECTIONS, requests: WARMUP_REQUESTS }); // JIT and caches
    for (let round = 0; round < ROUNDS; round += 1) {
      for (const mode of round % 2 === 0 ? MODES : [...MODES].reverse()) {
        const result = await load(port(mode), { connections: CONNECTIONS, durationS: DURATION_S });
        if (result.errors > 0 || result.non2xx > 0) throw new Error(`${mode}: ${result.errors} errors, ${result.non2xx} non-2xx`);
        results[mode].push(result);
        console.log(
          `round ${round + 1} ${mode.padEnd(14)} ${result.requestsPerSecond.toFixed(0).padStart(6)} req/s  ` +
            `${result.cpuMicrosPerRequest.toFixed(0).padStart(5)} µs server CPU/request  ` +
            `${result.clientCpuMicrosPerRequest.toFixed(0).padStart(4)} µs client CPU/request  load ${result.loadAverage.toFixed(1)}`,
        );
      }
    }
  } finally {
    for (const { child } of servers.values()) child.kill('SIGTERM');
  }
  const ratios = Object.fromEntries(
    Object.entries(COMPARISONS).map(([name, [mode, baseline]]) => [
      name,
      {
        throughput: results[mode].map((run, i) => run.requestsPerSecond / (results[baseline][i] as LoadResult).requestsPerSecond),
        cpu: results[mode].map((run, i) => run.cpuMicrosPerRequest / (results[baseline][i] as LoadResult).cpuMicrosPerRequest),
      },
    ]),
  ) as RunResult['ratios'];
  return { results, ratios };
}

async function throughput(): Promise<{ runs: RunResult[]; pageBytes: number; check: Record<string, unknown> }> {
  const root = await mkdtemp(join(tmpdir(), 'webpp-bench-'));
  const page = benchPage(50 * 1024);
  await writeFile(join(root, 'index.html'), page);
  await mkdir(join(root, 'images'));
  const check: Record<string, unknown> = {};
  const runs: RunResult[] = [];
  try {
    for (let run = 0; run < RUNS; run += 1) {
      console.log(`run ${run + 1} of ${RUNS}`);
      runs.push(await oneRun(root, check));
    }
  } finally {
    await rm(root, { recursive: true, force: true });
  }
  return { runs, pageBytes: Buffer.byteLength(page), check };
}

function coldParse(): Record<string, { pageBytes: number; medianMs: number; runs: number; bindings: number }> {
  const directory = new ReplicationDirectory();
  directory.batch({ add: directoryPairsFrom(benchDirectory, 'http://a.localhost:8081') });
  const settings = { directory, maxBindingsHeaderBytes: 8192, injectScriptPath: '/webpp.js' };
  const out: Record<string, { pageBytes: number; medianMs: number; runs: number; bindings: number }> = {};
  for (const [label, bytes, runs] of [['10KB', 10 * 1024, 40], ['100KB', 100 * 1024, 20], ['1MB', 1024 * 1024, 8]] as const) {
    const body = Buffer.from(benchPage(bytes));
    preprocessBody('html', body, 'text/html; charset=utf-8', 'http://a.localhost:8081/index.html', undefined, settings); // warm the JIT
    const times: number[] = [];
    let bindings = 0;
    for (let i = 0; i < runs; i += 1) {
      const started = process.hrtime.bigint();
      const result = preprocessBody('html', body, 'text/html; charset=utf-8', 'http://a.localhost:8081/index.html', undefined, settings);
      times.push(Number(process.hrtime.bigint() - started) / 1e6);
      bindings = result.bindingCount;
    }
    out[label] = { pageBytes: body.byteLength, medianMs: Number(median(times).toFixed(3)), runs, bindings };
    console.log(`cold pre-processing ${label.padEnd(5)} ${median(times).toFixed(2)} ms (median of ${runs}, ${bindings} bindings)`);
  }
  return out;
}

const LOAD_AT_START = loadavg()[0] ?? 0;
const cold = coldParse();
const measured = await throughput();
const { runs } = measured;
const perRun = (pick: (run: RunResult) => number[]): number[] => runs.map((run) => median(pick(run)));
const modeSummary = (mode: Mode) => ({
  requestsPerSecond: spread(perRun((run) => run.results[mode].map((r) => r.requestsPerSecond))),
  serverCpuMicrosPerRequest: spread(perRun((run) => run.results[mode].map((r) => r.cpuMicrosPerRequest))),
  clientCpuMicrosPerRequest: spread(perRun((run) => run.results[mode].map((r) => r.clientCpuMicrosPerRequest))),
});
const comparisonSummary = (name: Comparison) => ({
  mode: COMPARISONS[name][0],
  baseline: COMPARISONS[name][1],
  /** Per run, the median of the rounds' ratios; then median and range over the runs. */
  throughputRatio: spread(perRun((run) => run.ratios[name].throughput), 4),
  serverCpuPerRequestRatio: spread(perRun((run) => run.ratios[name].cpu), 4),
  roundRatios: runs.map((run) => run.ratios[name].throughput.map((ratio) => Number(ratio.toFixed(3)))),
});
const loads = runs.flatMap((run) => MODES.flatMap((mode) => run.results[mode].map((r) => r.loadAverage)));
const comparisons = Object.fromEntries((Object.keys(COMPARISONS) as Comparison[]).map((name) => [name, comparisonSummary(name)])) as Record<
  Comparison,
  ReturnType<typeof comparisonSummary>
>;
const report = {
  benchmark: 'origin pre-processing',
  command: 'npm run bench -- preprocess',
  date: new Date().toISOString(),
  node: process.version,
  cpus: cpus().length,
  /** 1-minute load average: other work on the machine skews throughput, far less CPU time per request. */
  loadAverage: {
    start: Number(LOAD_AT_START.toFixed(2)),
    duringRuns: spread(loads, 2),
    end: Number((loadavg()[0] ?? 0).toFixed(2)),
  },
  method:
    `${RUNS} runs, fresh server processes each (127.0.0.1); per run ${WARMUP_REQUESTS} warm-up requests per server, then ` +
    `${ROUNDS} rounds of autocannon (${CONNECTIONS} connections, ${DURATION_S} s per measurement), each mode next to its ` +
    'baseline, order reversed every other round; throughput ratios taken within each round, median per run, ' +
    'then median and range over the runs; CPU time per request from process.cpuUsage() of the server and of the load generator',
  page: { bytes: measured.pageBytes, ...measured.check },
  modes: {
    staticDisk: modeSummary('static'),
    memory: modeSummary('memory'),
    webppDefaults: modeSummary('webpp'),
    webppHeaderOnly: modeSummary('webpp-noinject'),
    webppNoCache: modeSummary('webpp-nocache'),
  },
  comparisons,
  goal: 'warm-cache throughput loss under 5% (paper, Section 5: +13.6% service time, +3.9 ms, without caching), like for like',
  goalMet: {
    headerOnlyVsStatic: comparisons.headerOnlyVsStatic.throughputRatio.median >= 0.95,
    defaultsVsMemory: comparisons.defaultsVsMemory.throughputRatio.median >= 0.95,
  },
  coldPreprocessing: cold,
};
await mkdir(join(OUTPUT, '..'), { recursive: true });
await writeFile(OUTPUT, `${JSON.stringify(report, null, 2)}\n`);
console.log('');
for (const [name, value] of Object.entries(comparisons)) {
  const t = value.throughputRatio;
  const c = value.serverCpuPerRequestRatio;
  console.log(
    `${name.padEnd(20)} throughput ${(t.median * 100).toFixed(1)}% (${(t.min * 100).toFixed(1)}–${(t.max * 100).toFixed(1)}) of ${value.baseline}, ` +
      `server CPU/request ${(c.median * 100).toFixed(1)}% (${(c.min * 100).toFixed(1)}–${(c.max * 100).toFixed(1)})`,
  );
}
console.log(`load average during the runs ${report.loadAverage.duringRuns.min}–${report.loadAverage.duringRuns.max}`);
console.log(`written to ${OUTPUT}`);
