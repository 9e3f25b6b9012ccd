/**
 * `npm run bench cache`: the cluster-wide memory cache (issue 15; GOS, Chen, Wang, Lau;
 * IBM's accelerator, Song et al. 2002) in proxy mode.
 *
 * - An upstream application with a real per-request cost (cache/upstream-app.ts: two SQLite
 *   queries in sql.js and an HTML render per page; no sleep), in its own process.
 * - Three `webpp-origin` servers (the CLI, each its own process) proxying it, on loopback.
 * - A site of PAGES pages (2–32 KB) whose total size is larger than one server's cache but
 *   smaller than the three caches together (ratios printed and written), requested with a
 *   Zipf distribution (alpha ALPHA) by CLIENTS concurrent keep-alive clients in this
 *   process, each request to one of the three servers at random.
 * - Configurations, same run, same memory per server: no cache; independent per-server
 *   LRU; cooperative Weighted-LFU; cooperative LFU-Aging; cooperative LRU.
 * - Each configuration: fresh servers, a warm-up (bounded by time and count), then a
 *   measurement (bounded by time and count). RUNS runs, the order of the configurations
 *   rotating between runs; medians and ranges.
 * - Reported: throughput, p95, local / peer hit and miss rates (the miss rate is the
 *   upstream's own request count over the clients' requests), bytes read from upstream.
 *
 * Writes docs/benchmarks/cache.json.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createServer } from 'node:net';
import { createRandom } from '@webpp/netem/model';
import { runLoad, type LoadResult } from './cache/load.js';
import { pageSizeBytes, zipfSampler } from './cache/site.js';
import { CONFIGS, type BenchConfig } from './cache/configs.js';

const RUNS = Number(process.env.WEBPP_BENCH_RUNS ?? 3);
const PAGES = Number(process.env.WEBPP_BENCH_PAGES ?? 1500);
const ALPHA = Number(process.env.WEBPP_BENCH_ALPHA ?? 0.8);
const CLIENTS = Number(process.env.WEBPP_BENCH_CLIENTS ?? 32);
const WARMUP_MS = Number(process.env.WEBPP_BENCH_WARMUP_MS ?? 10_000);
const MEASURE_MS = Number(process.env.WEBPP_BENCH_MEASURE_MS ?? 10_000);
const MAX_REQUESTS = 200_000;
/** One server's cache: this share of the site's bytes (the three together: three times it). */
const CACHE_SHARE = Number(process.env.WEBPP_BENCH_CACHE_SHARE ?? 0.45);
const ADMIN_TOKEN = 'bench-admin-token-0123456789';
const CLUSTER_SECRET = 'bench-cluster-secret-0123456789';
const CLI = fileURLToPath(new URL('../dist/cli.js', import.meta.url));
const UPSTREAM = fileURLToPath(new URL('./cache/upstream-app.ts', import.meta.url));
const OUTPUT = fileURLToPath(new URL('../../docs/benchmarks/cache.json', import.meta.url));
const READY_TIMEOUT_MS = 60_000;

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

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

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
  await exited;
  clearTimeout(timer);
}

async function json<T>(url: string): Promise<T> {
  const response = await fetch(url, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
  if (!response.ok) throw new Error(`${url}: ${response.status}`);
  return (await response.json()) as T;
}

interface CacheCounts {
  localHits: number;
  peerHits: number;
}

/** Local and peer hits of one origin, from its stats (memoryCache; zero with the cache off). */
async function cacheCounts(port: number): Promise<CacheCounts> {
  const stats = await json<{ origin?: { memoryCache?: { localHits?: number; peerHits?: number } } }>(`http://127.0.0.1:${port}/.well-known/webpp/stats`);
  return { localHits: stats.origin?.memoryCache?.localHits ?? 0, peerHits: stats.origin?.memoryCache?.peerHits ?? 0 };
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
}

async function measure(config: BenchConfig, run: number, upstreamPort: number, cacheBytes: number): Promise<Row> {
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
        '--data-dir',
        join(dataDir, String(index)),
        ...config.flags(cacheBytes),
      ];
      const child = spawn(process.execPath, args, {
        stdio: ['ignore', 'pipe', 'inherit'],
        env: { ...process.env, WEBPP_ADMIN_TOKEN: ADMIN_TOKEN, WEBPP_CLUSTER_SECRET: CLUSTER_SECRET },
      });
      origins.push(child);
      await waitForLine(child, /listening/, `origin ${index}`);
    }
    const random = createRandom('cache-bench', config.name, run);
    const nextPage = zipfSampler(PAGES, ALPHA, random);
    const load = (durationMs: number): Promise<LoadResult> => runLoad({ ports, clients: CLIENTS, durationMs, maxRequests: MAX_REQUESTS, nextPage, random });
    await load(WARMUP_MS);
    const before = await Promise.all(ports.map(cacheCounts));
    const upstreamBefore = await json<{ requests: number; bytes: number }>(`http://127.0.0.1:${upstreamPort}/__stats`);
    const result = await load(MEASURE_MS);
    const after = await Promise.all(ports.map(cacheCounts));
    const upstreamAfter = await json<{ requests: number; bytes: number }>(`http://127.0.0.1:${upstreamPort}/__stats`);
    if (result.errors > 0 || result.non200 > 0) throw new Error(`${config.name}: ${result.errors} errors, ${result.non200} non-200`);
    const sum = (list: CacheCounts[], key: keyof CacheCounts): number => list.reduce((total, counts) => total + counts[key], 0);
    const upstreamRequests = upstreamAfter.requests - upstreamBefore.requests;
    const pct = (count: number): number => (100 * count) / Math.max(1, result.requests);
    return {
      config: config.name,
      run,
      load: result,
      localHitPct: pct(sum(after, 'localHits') - sum(before, 'localHits')),
      peerHitPct: pct(sum(after, 'peerHits') - sum(before, 'peerHits')),
      missPct: pct(upstreamRequests),
      upstreamRequests,
      upstreamBytes: upstreamAfter.bytes - upstreamBefore.bytes,
      loadAverage: loadavg()[0] ?? 0,
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
  console.log(`Zipf alpha ${ALPHA}, ${CLIENTS} clients, warm-up ${WARMUP_MS} ms, measurement ${MEASURE_MS} ms, ${RUNS} runs`);
  const upstream = spawn(process.execPath, ['--import', 'tsx', UPSTREAM, String(PAGES)], { stdio: ['ignore', 'pipe', 'inherit'] });
  const rows: Row[] = [];
  try {
    const upstreamPort = Number((await waitForLine(upstream, /READY (\d+)/, 'upstream'))[1]);
    for (let run = 0; run < RUNS; run += 1) {
      const order = CONFIGS.map((_, index) => CONFIGS[(index + run) % CONFIGS.length] as BenchConfig);
      for (const config of order) {
        const row = await measure(config, run, upstreamPort, cacheBytes);
        rows.push(row);
        console.log(
          `run ${run + 1} ${config.name.padEnd(18)} ${row.load.throughputRps.toFixed(0).padStart(6)} req/s  p95 ${row.load.p95Ms.toFixed(1).padStart(7)} ms  ` +
            `local ${row.localHitPct.toFixed(1).padStart(5)} %  peer ${row.peerHitPct.toFixed(1).padStart(5)} %  miss ${row.missPct.toFixed(1).padStart(5)} %  ` +
            `upstream ${(row.upstreamBytes / 1e6).toFixed(1)} MB  load ${row.loadAverage.toFixed(1)}`,
        );
      }
    }
  } finally {
    await stop(upstream);
  }
  const summary = CONFIGS.map((config) => {
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
    coopWeightedLfuBeatsIndependentLruOnUpstreamLoad: weighted !== undefined && independent !== undefined && weighted.upstream_mb < independent.upstream_mb,
    throughputWithCacheOverWithout: noCache === undefined || weighted === undefined ? undefined : round(weighted.throughput_rps / noCache.throughput_rps, 2),
  };
  console.table(summary.map(({ throughput_range_rps: _t, p95_range_ms: _p, miss_range_pct: _m, ...rest }) => rest));
  console.log('goals:', goals);
  const document = {
    benchmark: 'cache',
    generatedAt: new Date().toISOString(),
    settings: { pages: PAGES, siteBytes, cacheBytesPerServer: cacheBytes, cacheShareOfSite: CACHE_SHARE, servers: 3, zipfAlpha: ALPHA, clients: CLIENTS, warmupMs: WARMUP_MS, measureMs: MEASURE_MS, runs: RUNS },
    rows: summary,
    goals,
    runs: rows.map((row) => ({ ...row, load: { ...row.load } })),
  };
  await writeFile(OUTPUT, `${JSON.stringify(document, null, 2)}\n`);
  console.log(`wrote ${OUTPUT}`);
}

await main();
