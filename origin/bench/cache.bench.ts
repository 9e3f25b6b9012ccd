/**
 * `npm run bench cache`: the cluster-wide memory cache (issue 15; GOS, Chen, Wang, Lau;
 * IBM's accelerator, Song et al. 2002) in proxy mode.
 *
 * - An upstream application with a real per-request cost (cache/upstream-app.ts: two SQLite
 *   queries in sql.js and an HTML render per page; no sleep), in its own process.
 * - Three `webpp-origin` servers (the CLI, each its own process) proxying it, on loopback.
 * - A site of PAGES pages (2–32 KB) whose total size is larger than one server's cache and
 *   than the three caches together (ratios printed and written), requested with a
 *   Zipf distribution (alpha ALPHA) by CLIENTS concurrent keep-alive clients in this
 *   process, each request to one of the three servers at random.
 * - Configurations, same run, same memory per server: no cache; independent per-server
 *   LRU; cooperative Weighted-LFU; cooperative LFU-Aging; cooperative LRU.
 * - Each configuration: fresh servers, a warm-up, then a measurement (each bounded by a
 *   request count and a time). RUNS runs, the order of the configurations
 *   rotating between runs; medians and ranges.
 * - Reported: throughput, p95, local / peer hit and miss rates (the miss rate is the
 *   upstream's own request count over the clients' requests), bytes read from upstream.
 *
 * Writes docs/benchmarks/cache.json (WEBPP_BENCH_OUT: another file, e.g. for a run with
 * another WEBPP_BENCH_CACHE_SHARE).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createRandom } from '@webpp/netem/model';
import { runLoad, type LoadResult } from './cache/load.js';
import { pageSizeBytes, zipfSampler } from './cache/site.js';
import { CONFIGS, type BenchConfig } from './cache/configs.js';
import { freePort } from '../test/helpers.js';

const RUNS = Number(process.env.WEBPP_BENCH_RUNS ?? 3);
const PAGES = Number(process.env.WEBPP_BENCH_PAGES ?? 1000);
const ALPHA = Number(process.env.WEBPP_BENCH_ALPHA ?? 0.8);
const CLIENTS = Number(process.env.WEBPP_BENCH_CLIENTS ?? 16);
/** Warm-up and measurement: this many requests, or this long, whichever comes first. */
/** Short phases, so that 3 runs of the 5 configurations take at most about 15 minutes. */
const WARMUP_REQUESTS = Number(process.env.WEBPP_BENCH_WARMUP_REQUESTS ?? 3000);
const WARMUP_MS = Number(process.env.WEBPP_BENCH_WARMUP_MS ?? 25_000);
const MEASURE_REQUESTS = Number(process.env.WEBPP_BENCH_MEASURE_REQUESTS ?? 3000);
const MEASURE_MS = Number(process.env.WEBPP_BENCH_MEASURE_MS ?? 20_000);
/**
 * One server's cache: this share of the site's bytes. 0.45, the configuration: the
 * working set is larger than one server's cache and smaller than the cluster's (1.35 × the
 * site). With 0.25 (the three together hold three quarters of the site) replacement decides
 * what the cluster keeps and the three cooperative policies separate; docs/origin.md reports
 * both (WEBPP_BENCH_CACHE_SHARE=0.25 WEBPP_BENCH_OUT=docs/benchmarks/cache-replacement.json).
 */
const CACHE_SHARE = Number(process.env.WEBPP_BENCH_CACHE_SHARE ?? 0.45);
/** WEBPP_BENCH_CONFIGS=a,b: only these configurations (a partial run; the JSON says which ran). */
const SELECTED = process.env.WEBPP_BENCH_CONFIGS === undefined ? CONFIGS : CONFIGS.filter((config) => (process.env.WEBPP_BENCH_CONFIGS ?? '').split(',').includes(config.name));
const ADMIN_TOKEN = 'bench-admin-token-0123456789';
const CLUSTER_SECRET = 'bench-cluster-secret-0123456789';
const CLI = fileURLToPath(new URL('../dist/cli.js', import.meta.url));
const UPSTREAM = fileURLToPath(new URL('./cache/upstream-app.ts', import.meta.url));
const OUTPUT = process.env.WEBPP_BENCH_OUT ?? fileURLToPath(new URL('../../docs/benchmarks/cache.json', import.meta.url));
const READY_TIMEOUT_MS = 60_000;

function waitForLine(child: ChildProcess, pattern: RegExp, what: string): Promise<RegExpExecArray> {
  return new Promise((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => reject(new Error(`${what} not ready`)), READY_TIMEOUT_MS);
    child.stdout?.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const match = pattern.exec(out);
      if (match !== null) {
        clearTimeout(timer);
        resolve(match);
      }
    });
    child.once('exit', (code) => reject(new Error(`${what} exited with ${code}`)));
  });
}

/** Until the origin answers its stats (it logs at warn: no "listening" line to wait for). */
async function waitForHttp(child: ChildProcess, port: number, what: string): Promise<void> {
  const deadlineMs = Date.now() + READY_TIMEOUT_MS;
  while (Date.now() < deadlineMs) {
    if (child.exitCode !== null) throw new Error(`${what} exited with ${child.exitCode}`);
    const ok = await fetch(`http://127.0.0.1:${port}/.well-known/webpp/stats`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } }).then(
      async (response) => (await response.arrayBuffer(), response.ok),
      () => false,
    );
    if (ok) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`${what} not ready`);
}

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
  await exited;
  clearTimeout(timer);
}

/** CPU time (user + system) a process has used so far, in ms, from /proc (Linux; clock ticks of 10 ms). */
async function cpuMs(pid: number | undefined): Promise<number> {
  if (pid === undefined) return Number.NaN;
  try {
    const fields = (await readFile(`/proc/${pid}/stat`, 'utf8')).split(') ')[1]?.split(' ') ?? [];
    return (Number(fields[11]) + Number(fields[12])) * 10;
  } catch {
    return Number.NaN;
  }
}

async function json<T>(url: string): Promise<T> {
  const response = await fetch(url, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
  if (!response.ok) throw new Error(`${url}: ${response.status}`);
  return (await response.json()) as T;
}

type CacheCounts = Record<string, number>;

/** One origin's cache counters, from its stats: the memory cache's and the cooperative layer's (empty with the cache off). */
async function cacheCounts(port: number): Promise<CacheCounts> {
  const stats = await json<{ origin?: { memoryCache?: Record<string, unknown>; cacheCluster?: { self: string; servers: Record<string, { counters: Record<string, number> }> } } }>(
    `http://127.0.0.1:${port}/.well-known/webpp/stats`,
  );
  const counts: CacheCounts = {};
  for (const [name, value] of Object.entries(stats.origin?.memoryCache ?? {})) if (typeof value === 'number') counts[name] = value;
  const cluster = stats.origin?.cacheCluster;
  for (const [name, value] of Object.entries(cluster?.servers[cluster.self]?.counters ?? {})) counts[name] ??= value;
  return counts;
}

/** Sums each counter over the servers, after minus before. */
function counterDeltas(before: CacheCounts[], after: CacheCounts[]): CacheCounts {
  const deltas: CacheCounts = {};
  after.forEach((counts, index) => {
    for (const [name, value] of Object.entries(counts)) deltas[name] = (deltas[name] ?? 0) + value - (before[index]?.[name] ?? 0);
  });
  return deltas;
}

interface Row {
  config: string;
  run: number;
  load: LoadResult;
  localHitPct: number;
  peerHitPct: number;
  missPct: number;
  upstreamRequests: number;
  upstreamBytes: number;
  loadAverage: number;
  /** CPU time of the three origins and the upstream per request (ms): steadier than throughput on a shared machine. */
  serverCpuMsPerRequest: number;
  /** Cache counters over the measurement, summed over the three servers. */
  counters: CacheCounts;
}

async function measure(config: BenchConfig, run: number, upstream: { port: number; pid: number | undefined }, cacheBytes: number): Promise<Row> {
  const upstreamPort = upstream.port;
  const ports = [await freePort(), await freePort(), await freePort()];
  const urls = ports.map((port) => `http://127.0.0.1:${port}`);
  const origins: ChildProcess[] = [];
  const dataDir = await mkdtemp(join(tmpdir(), 'webpp-cache-bench-'));
  try {
    for (const [index, port] of ports.entries()) {
      const args = [
        CLI,
        '--proxy-upstream',
        `http://127.0.0.1:${upstreamPort}`,
        '--port',
        String(port),
        '--public-url',
        urls[index] as string,
        '--logical-origin',
        urls[0] as string,
        '--peer',
        urls.filter((_, other) => other !== index).join(','),
        '--no-inject',
        // Request logs (two lines per request at info) would cost every configuration the same fixed time per request.
        '--log-level',
        'warn',
        '--data-dir',
        join(dataDir, String(index)),
        ...config.flags(cacheBytes),
      ];
      // WEBPP_BENCH_ORIGIN_NODE_ARGS="--cpu-prof --cpu-prof-dir=/tmp/prof": profile the origins.
      const nodeArgs = (process.env.WEBPP_BENCH_ORIGIN_NODE_ARGS ?? '').split(' ').filter((arg) => arg !== '');
      const child = spawn(process.execPath, [...nodeArgs, ...args], {
        stdio: ['ignore', 'inherit', 'inherit'],
        env: { ...process.env, WEBPP_ADMIN_TOKEN: ADMIN_TOKEN, WEBPP_CLUSTER_SECRET: CLUSTER_SECRET },
      });
      origins.push(child);
      await waitForHttp(child, port, `origin ${index}`);
    }
    const random = createRandom('cache-bench', config.name, run);
    const nextPage = zipfSampler(PAGES, ALPHA, random);
    const load = (durationMs: number, maxRequests: number): Promise<LoadResult> => runLoad({ ports, clients: CLIENTS, durationMs, maxRequests, nextPage, random });
    await load(WARMUP_MS, WARMUP_REQUESTS);
    const before = await Promise.all(ports.map(cacheCounts));
    const upstreamBefore = await json<{ requests: number; bytes: number }>(`http://127.0.0.1:${upstreamPort}/__stats`);
    const serverCpu = async (): Promise<number> => (await Promise.all([...origins.map((child) => cpuMs(child.pid)), cpuMs(upstream.pid)])).reduce((a, b) => a + b, 0);
    const cpuBefore = await serverCpu();
    const result = await load(MEASURE_MS, MEASURE_REQUESTS);
    const after = await Promise.all(ports.map(cacheCounts));
    const upstreamAfter = await json<{ requests: number; bytes: number }>(`http://127.0.0.1:${upstreamPort}/__stats`);
    const cpuAfter = await serverCpu();
    // A rare reset on a loaded machine is reported, not fatal; more than 1 % fails the run.
    if (result.errors + result.non200 > 0) console.warn(`${config.name}: ${result.errors} errors (first: ${result.firstError ?? '-'}), ${result.non200} non-200`);
    if (result.errors + result.non200 > 0.01 * result.requests) throw new Error(`${config.name}: too many failed requests`);
    const counters = counterDeltas(before, after);
    const upstreamRequests = upstreamAfter.requests - upstreamBefore.requests;
    const pct = (count: number): number => (100 * count) / Math.max(1, result.requests);
    return {
      config: config.name,
      run,
      load: result,
      localHitPct: pct(counters.localHits ?? 0),
      peerHitPct: pct(counters.peerHits ?? 0),
      missPct: pct(upstreamRequests),
      upstreamRequests,
      upstreamBytes: upstreamAfter.bytes - upstreamBefore.bytes,
      loadAverage: loadavg()[0] ?? 0,
      serverCpuMsPerRequest: (cpuAfter - cpuBefore) / Math.max(1, result.requests),
      counters,
    };
  } finally {
    for (const child of origins) await stop(child);
    await rm(dataDir, { recursive: true, force: true });
  }
}

const median = (values: number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? (sorted[middle] ?? Number.NaN) : ((sorted[middle - 1] ?? 0) + (sorted[middle] ?? 0)) / 2;
};
const range = (values: number[]): [number, number] => [Math.min(...values), Math.max(...values)];
const round = (value: number, digits = 1): number => Number(value.toFixed(digits));

async function main(): Promise<void> {
  let siteBytes = 0;
  for (let page = 0; page < PAGES; page += 1) siteBytes += pageSizeBytes(page);
  const cacheBytes = Math.round(siteBytes * CACHE_SHARE);
  console.log(`site: ${PAGES} pages, ${(siteBytes / 1e6).toFixed(1)} MB; cache per server ${(cacheBytes / 1e6).toFixed(1)} MB (${CACHE_SHARE * 100} % of the site; the three: ${(3 * CACHE_SHARE * 100).toFixed(0)} %)`);
  console.log(
    `Zipf alpha ${ALPHA}, ${CLIENTS} clients, warm-up ${WARMUP_REQUESTS} requests (≤ ${WARMUP_MS} ms), measurement ${MEASURE_REQUESTS} requests (≤ ${MEASURE_MS} ms), ${RUNS} runs`,
  );
  const upstreamProcess = spawn(process.execPath, ['--import', 'tsx', UPSTREAM, String(PAGES)], { stdio: ['ignore', 'pipe', 'inherit'] });
  const rows: Row[] = [];
  try {
    const upstreamPort = Number((await waitForLine(upstreamProcess, /READY (\d+)/, 'upstream'))[1]);
    for (let run = 0; run < RUNS; run += 1) {
      const order = SELECTED.map((_, index) => SELECTED[(index + run) % SELECTED.length] as BenchConfig);
      for (const config of order) {
        const row = await measure(config, run, { port: upstreamPort, pid: upstreamProcess.pid }, cacheBytes);
        rows.push(row);
        console.log(
          `run ${run + 1} ${config.name.padEnd(18)} ${row.load.throughputRps.toFixed(0).padStart(6)} req/s  p95 ${row.load.p95Ms.toFixed(1).padStart(7)} ms  ` +
            `local ${row.localHitPct.toFixed(1).padStart(5)} %  peer ${row.peerHitPct.toFixed(1).padStart(5)} %  miss ${row.missPct.toFixed(1).padStart(5)} %  ` +
            `upstream ${(row.upstreamBytes / 1e6).toFixed(1)} MB  CPU ${row.serverCpuMsPerRequest.toFixed(2)} ms/req  load ${row.loadAverage.toFixed(1)}`,
        );
      }
    }
  } finally {
    await stop(upstreamProcess);
  }
  const summary = SELECTED.map((config) => {
    const mine = rows.filter((row) => row.config === config.name);
    const pick = (get: (row: Row) => number): number[] => mine.map(get);
    return {
      config: config.name,
      throughput_rps: round(median(pick((row) => row.load.throughputRps)), 0),
      p95_ms: round(median(pick((row) => row.load.p95Ms))),
      local_hit_pct: round(median(pick((row) => row.localHitPct))),
      peer_hit_pct: round(median(pick((row) => row.peerHitPct))),
      miss_pct: round(median(pick((row) => row.missPct))),
      array_hit_pct: round(median(pick((row) => 100 - row.missPct))),
      upstream_mb: round(median(pick((row) => row.upstreamBytes / 1e6))),
      // Per measured request: comparable when a time-capped phase measured fewer requests.
      upstream_kb_per_request: round(median(pick((row) => row.upstreamBytes / 1e3 / Math.max(1, row.load.requests))), 2),
      upstream_requests: round(median(pick((row) => row.upstreamRequests)), 0),
      server_cpu_ms_per_request: round(median(pick((row) => row.serverCpuMsPerRequest)), 2),
      throughput_range_rps: range(pick((row) => row.load.throughputRps)).map((value) => round(value, 0)),
      p95_range_ms: range(pick((row) => row.load.p95Ms)).map((value) => round(value)),
      miss_range_pct: range(pick((row) => row.missPct)).map((value) => round(value)),
      runs: mine.length,
    };
  });
  const noCache = summary.find((row) => row.config === 'no-cache');
  const independent = summary.find((row) => row.config === 'independent-lru');
  const weighted = summary.find((row) => row.config === 'coop-weighted-lfu');
  const goals = {
    coopWeightedLfuBeatsIndependentLruOnArrayHits: weighted !== undefined && independent !== undefined && weighted.array_hit_pct > independent.array_hit_pct,
    coopWeightedLfuBeatsIndependentLruOnUpstreamLoad: weighted !== undefined && independent !== undefined && weighted.upstream_kb_per_request < independent.upstream_kb_per_request,
    throughputWithCacheOverWithout: noCache === undefined || weighted === undefined ? undefined : round(weighted.throughput_rps / noCache.throughput_rps, 2),
    serverCpuPerRequestWithoutOverWith: noCache === undefined || weighted === undefined ? undefined : round(noCache.server_cpu_ms_per_request / weighted.server_cpu_ms_per_request, 2),
  };
  console.table(summary.map(({ throughput_range_rps: _t, p95_range_ms: _p, miss_range_pct: _m, ...rest }) => rest));
  console.log('goals:', goals);
  const document = {
    benchmark: 'cache',
    generatedAt: new Date().toISOString(),
    settings: {
      pages: PAGES,
      siteBytes,
      cacheBytesPerServer: cacheBytes,
      cacheShareOfSite: CACHE_SHARE,
      servers: 3,
      zipfAlpha: ALPHA,
      clients: CLIENTS,
      warmupRequests: WARMUP_REQUESTS,
      warmupMaxMs: WARMUP_MS,
      measureRequests: MEASURE_REQUESTS,
      measureMaxMs: MEASURE_MS,
      runs: RUNS,
    },
    rows: summary,
    goals,
    runs: rows.map((row) => ({ ...row, load: { ...row.load } })),
  };
  await writeFile(OUTPUT, `${JSON.stringify(document, null, 2)}\n`);
  console.log(`wrote ${OUTPUT}`);
}

await main();
