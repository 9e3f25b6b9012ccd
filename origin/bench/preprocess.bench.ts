/**
 * Cost of pre-processing (paper Section 5: the servlet added 13.6% service time without
 * caching; goal here: under 5% throughput loss with the cache warm).
 *
 * 1. Throughput, same 50 KB HTML page, same machine, same run: plain @fastify/static vs
 *    the webpp plugin with a warm cache — with script injection (the default: the rewritten
 *    page is served from the cache) and without (only the bindings header is added, the
 *    body streams from disk exactly as with @fastify/static) — and with the cache disabled. Each server
 *    runs in its own process; the conditions alternate over several rounds and the median
 *    is reported, since this machine is shared and noisy. All loopback, bounded in time.
 * 2. Cold pre-processing time (parse + match + encode + inject) for 10 KB, 100 KB, 1 MB pages.
 *
 * Writes docs/benchmarks/origin-preprocess.json.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { ReplicationDirectory } from '../src/directory/replication-directory.js';
import { directoryPairsFrom } from '../src/directory/directory-file.js';
import { preprocessBody } from '../src/bindings/preprocess.js';
import { benchDirectory, benchPage } from './page.js';

const ROUNDS = Number(process.env.WEBPP_BENCH_ROUNDS ?? 5);
const DURATION_S = Number(process.env.WEBPP_BENCH_DURATION_S ?? 5);
const CONNECTIONS = 10;
const SERVER = fileURLToPath(new URL('./bench-server.ts', import.meta.url));
const OUTPUT = fileURLToPath(new URL('../../docs/benchmarks/origin-preprocess.json', import.meta.url));

type Mode = 'static' | 'webpp' | 'webpp-noinject' | 'webpp-nocache';

async function startServer(mode: Mode, root: string): Promise<{ child: ChildProcess; port: number }> {
  const child = spawn(process.execPath, ['--import', 'tsx', SERVER, mode, root], { stdio: ['ignore', 'pipe', 'inherit'] });
  const port = await new Promise<number>((resolve, reject) => {
    let out = '';
    child.stdout?.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const match = /READY (\d+)/.exec(out);
      if (match !== null) resolve(Number(match[1]));
    });
    child.once('exit', (code) => reject(new Error(`${mode} server exited with ${code}`)));
    setTimeout(() => reject(new Error(`${mode} server not ready`)), 30_000).unref();
  });
  return { child, port };
}

async function serverCpuMicros(port: number): Promise<number> {
  const usage = (await (await fetch(`http://127.0.0.1:${port}/__cpu`)).json()) as { user: number; system: number };
  return usage.user + usage.system;
}

interface LoadResult {
  requestsPerSecond: number;
  /** Server CPU time (user + system) per request: far less sensitive than throughput to other load on the machine. */
  cpuMicrosPerRequest: number;
  errors: number;
  non2xx: number;
}

async function load(port: number, durationS: number): Promise<LoadResult> {
  const cpuBefore = await serverCpuMicros(port);
  const result = await autocannon({
    url: `http://127.0.0.1:${port}/index.html`,
    connections: CONNECTIONS,
    duration: durationS,
    pipelining: 1,
  });
  const cpuMicros = (await serverCpuMicros(port)) - cpuBefore;
  return {
    requestsPerSecond: result.requests.average,
    cpuMicrosPerRequest: cpuMicros / Math.max(1, result.requests.total),
    errors: result.errors,
    non2xx: result.non2xx,
  };
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? (sorted[middle] as number) : ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2;
}

async function throughput(): Promise<Record<Mode, LoadResult[]> & { pageBytes: number; check: Record<string, unknown> }> {
  const root = await mkdtemp(join(tmpdir(), 'webpp-bench-'));
  const page = benchPage(50 * 1024);
  await writeFile(join(root, 'index.html'), page);
  await mkdir(join(root, 'images'));
  const modes: Mode[] = ['static', 'webpp', 'webpp-noinject', 'webpp-nocache'];
  const servers = new Map<Mode, { child: ChildProcess; port: number }>();
  const results: Record<Mode, LoadResult[]> = { static: [], webpp: [], 'webpp-noinject': [], 'webpp-nocache': [] };
  const check: Record<string, unknown> = {};
  try {
    for (const mode of modes) servers.set(mode, await startServer(mode, root));
    // Sanity: the plugin really pre-processes (bindings header, injected script).
    const probe = await fetch(`http://127.0.0.1:${servers.get('webpp')?.port}/index.html`);
    const body = await probe.text();
    check.bindingsHeaderBytes = probe.headers.get('webpp-bindings')?.length ?? 0;
    check.injected = body.includes('<script src="/webpp.js" async></script>');
    if (check.bindingsHeaderBytes === 0 || check.injected !== true) throw new Error('the webpp server did not pre-process the page');
    for (const mode of modes) await load(servers.get(mode)?.port as number, 2); // warm-up (JIT, caches)
    for (let round = 0; round < ROUNDS; round += 1) {
      const order = round % 2 === 0 ? modes : [...modes].reverse();
      for (const mode of order) {
        const result = await load(servers.get(mode)?.port as number, DURATION_S);
        if (result.errors > 0 || result.non2xx > 0) throw new Error(`${mode}: ${result.errors} errors, ${result.non2xx} non-2xx`);
        results[mode].push(result);
        console.log(`round ${round + 1} ${mode.padEnd(14)} ${result.requestsPerSecond.toFixed(0).padStart(6)} req/s  ${result.cpuMicrosPerRequest.toFixed(0).padStart(6)} µs CPU/request`);
      }
    }
  } finally {
    for (const { child } of servers.values()) child.kill('SIGTERM');
    await rm(root, { recursive: true, force: true });
  }
  return { ...results, pageBytes: Buffer.byteLength(page), check };
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
const runs = await throughput();
const rps = (mode: Mode): number => median(runs[mode].map((run) => run.requestsPerSecond));
const cpu = (mode: Mode): number => median(runs[mode].map((run) => run.cpuMicrosPerRequest));
const summary = (mode: Mode) => ({
  medianRequestsPerSecond: Math.round(rps(mode)),
  medianCpuMicrosPerRequest: Math.round(cpu(mode)),
  runs: runs[mode].map((run) => ({ requestsPerSecond: Math.round(run.requestsPerSecond), cpuMicrosPerRequest: Math.round(run.cpuMicrosPerRequest) })),
});
const ratio = (value: number): number => Number(value.toFixed(4));
const report = {
  benchmark: 'origin pre-processing',
  command: 'npm run bench -- preprocess',
  date: new Date().toISOString(),
  node: process.version,
  cpus: cpus().length,
  /** 1-minute load average at the start and the end: other work on the machine skews throughput. */
  loadAverage: { start: Number(LOAD_AT_START.toFixed(2)), end: Number((loadavg()[0] ?? 0).toFixed(2)) },
  method:
    `autocannon, ${CONNECTIONS} connections, ${DURATION_S} s per measurement, ${ROUNDS} alternating rounds, median; ` +
    'each server in its own process on 127.0.0.1; server CPU time per request from process.cpuUsage()',
  page: { bytes: runs.pageBytes, ...runs.check },
  modes: {
    staticOnly: summary('static'),
    webppWarmCache: summary('webpp'),
    webppWarmCacheHeaderOnly: summary('webpp-noinject'),
    webppNoCache: summary('webpp-nocache'),
  },
  warmCache: {
    throughputRatio: ratio(rps('webpp') / rps('static')),
    throughputLossPercent: Number(((1 - rps('webpp') / rps('static')) * 100).toFixed(2)),
    cpuPerRequestRatio: ratio(cpu('webpp') / cpu('static')),
  },
  warmCacheHeaderOnly: {
    throughputRatio: ratio(rps('webpp-noinject') / rps('static')),
    throughputLossPercent: Number(((1 - rps('webpp-noinject') / rps('static')) * 100).toFixed(2)),
    cpuPerRequestRatio: ratio(cpu('webpp-noinject') / cpu('static')),
  },
  noCache: {
    throughputRatio: ratio(rps('webpp-nocache') / rps('static')),
    cpuPerRequestRatio: ratio(cpu('webpp-nocache') / cpu('static')),
    addedCpuMsPerRequest: Number(((cpu('webpp-nocache') - cpu('static')) / 1000).toFixed(2)),
  },
  goal: 'warm-cache throughput loss under 5% (paper, Section 5: +13.6% service time, +3.9 ms, without caching)',
  coldPreprocessing: cold,
};
await mkdir(join(OUTPUT, '..'), { recursive: true });
await writeFile(OUTPUT, `${JSON.stringify(report, null, 2)}\n`);
const line = (label: string, value: { throughputRatio: number; cpuPerRequestRatio: number }): void =>
  console.log(`${label.padEnd(44)} throughput ${(value.throughputRatio * 100).toFixed(1)}% of static, CPU/request ${(value.cpuPerRequestRatio * 100).toFixed(1)}% of static`);
console.log('');
line('warm cache (defaults: bindings + injection)', report.warmCache);
line('warm cache, bindings header only', report.warmCacheHeaderOnly);
line('no cache', report.noCache);
console.log(`written to ${OUTPUT}`);
