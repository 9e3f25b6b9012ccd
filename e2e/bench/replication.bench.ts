/**
 * Load-driven replication (issue 14; DCWS, Baker and Moon 1998, Figure 8): four origins on
 * loopback, each with a finite capacity (replication/capacity-origin.ts), start cold — the
 * whole site on the home server, the co-ops empty. Many concurrent Node clients, each
 * running the worker's selection engine with real HTTP (support/node-client.ts), visit
 * Zipf-chosen pages and load what they embed. The same workload runs twice in one run:
 * without automatic replication, then with it (fresh servers each time). Per second: requests
 * ("connections") and bytes served in total and per server, p95 response time, migrations
 * and withdrawals. Throughput and p95 are compared over the settled tail of each phase.
 *
 *   npm run bench replication
 *
 * Environment (all optional):
 *   REPLICATION_CLIENTS       concurrent clients (default 8)
 *   REPLICATION_THINK_MS      mean think time between a client's page visits, ms (default 500)
 *   REPLICATION_WITHOUT_S     length of the phase without replication, s (default 30)
 *   REPLICATION_WITH_S        length of the phase with replication, s (default 100)
 *   REPLICATION_SETTLED_S     tail of each phase the figures are taken over, s (default 20)
 *   REPLICATION_SEED          seed of the site and workload (default 1)
 *   REPLICATION_RUNS          runs of both phases; figures are medians with ranges (default 3)
 *
 * Writes docs/benchmarks/replication.json and docs/benchmarks/replication.svg.
 */
import { mkdtemp, rm, writeFile, mkdir } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createRandom } from '@webpp/netem';
import { NodeWebppClient } from './support/node-client.js';
import { startCapacityOrigin, type CapacityOrigin } from './replication/capacity-origin.js';
import { writeSite, type Site } from './replication/site.js';
import { phaseSvg } from './replication/plot.js';
import { WEBPP_INTERNALS } from '@webpp/origin/_private';

const envNumber = (name: string, fallback: number): number => {
  const value = Number(process.env[name]);
  return Number.isFinite(value) && value > 0 ? value : fallback;
};
const CLIENTS = envNumber('REPLICATION_CLIENTS', 8);
/** Mean think time between a client's page visits (exponential), ms. */
const THINK_MS = envNumber('REPLICATION_THINK_MS', 500);
const WITHOUT_S = envNumber('REPLICATION_WITHOUT_S', 30);
const WITH_S = envNumber('REPLICATION_WITH_S', 100);
const SETTLED_S = envNumber('REPLICATION_SETTLED_S', 20);
const SEED = envNumber('REPLICATION_SEED', 1);
const RUNS = envNumber('REPLICATION_RUNS', 3);
const SERVERS = 4;
/** Each server: 2 requests at once, 40 ms each → at most 50 requests/s. */
const CAPACITY = { slots: 2, serviceMs: 40, maxQueued: 5000 };
const SECRET = 'replication-bench-secret-0123456789';
const repoRoot = new URL('../../', import.meta.url).pathname;

/** Replication periods scaled down from Table 1 so that a phase of ~100 s settles (docs/origin.md). */
const REPLICATION = {
  replicationWindowMs: 10_000,
  replicationIntervalMs: 1000, // T_st
  replicationCoopIntervalMs: 2000, // T_coop
  replicationHomeMs: 60_000, // T_home
  replicationHitThreshold: 20,
  replicationMinLoad: 5,
  [WEBPP_INTERNALS]: { replicationPeerMaxAgeMs: 5000 }, // a constant of the origin (60 s), scaled down like the periods
  replicationValidateIntervalMs: 30_000, // T_validate
};

interface Sample {
  atMs: number;
  server: string | undefined;
  bytes: number;
  elapsedMs: number;
  ok: boolean;
}

export interface SecondRow {
  second: number;
  requestsPerServer: number[];
  bytesPerServer: number[];
  requests: number;
  bytes: number;
  p95Ms: number;
  failed: number;
  migrations: number;
  withdrawals: number;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

function percentile(values: number[], q: number): number {
  if (values.length === 0) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)] ?? 0;
}

async function startCluster(workDir: string, site: string, autoReplicate: boolean): Promise<CapacityOrigin[]> {
  const ports = await Promise.all(Array.from({ length: SERVERS }, () => freePort()));
  const urls = ports.map((port) => `http://127.0.0.1:${port}`);
  const servers: CapacityOrigin[] = [];
  for (let i = 0; i < SERVERS; i += 1) {
    const root = i === 0 ? site : join(workDir, `coop-${i}`);
    await mkdir(root, { recursive: true });
    servers.push(
      await startCapacityOrigin(ports[i] ?? 0, root, CAPACITY, {
        dataDir: join(workDir, `data-${i}`),
        logicalOrigin: urls[0],
        clusterSecret: SECRET,
        peers: urls.filter((_, j) => j !== i),
        syncIntervalMs: 250,
        peerTimeoutMs: 3000,
        peerPingIntervalMs: 1000,
        injectScript: false,
        autoReplicate: autoReplicate && i === 0,
        ...REPLICATION,
      }),
    );
  }
  return servers;
}

async function runPhase(name: string, site: Site, servers: CapacityOrigin[], seconds: number): Promise<{ rows: SecondRow[]; samples: Sample[] }> {
  const home = servers[0];
  if (home === undefined) throw new Error('no home');
  const serverIndex = new Map(servers.map((server, i) => [server.url, i]));
  const samples: Sample[] = [];
  const startMs = Date.now();
  const deadlineMs = startMs + seconds * 1000;
  const clients = Array.from({ length: CLIENTS }, () => new NodeWebppClient({ requestTimeoutMs: 30_000 }));
  let reportedFailures = 0;
  const record = (result: Awaited<ReturnType<NodeWebppClient['get']>>, url: string): void => {
    if (!result.ok && reportedFailures < 5) {
      reportedFailures += 1;
      console.log(`  failed: ${url} status ${result.status} ${result.failure ?? ''} after ${Math.round(result.elapsedMs)} ms`);
    }
    samples.push({ atMs: Date.now(), server: result.server, bytes: result.bodyBytes, elapsedMs: result.elapsedMs, ok: result.ok });
  };
  const loop = async (client: NodeWebppClient, index: number): Promise<void> => {
    const random = createRandom(SEED, name, index);
    while (Date.now() < deadlineMs) {
      const page = site.pickPage(random);
      const pageResult = await client.get(home.url + page.path);
      record(pageResult, page.path);
      if (!pageResult.ok || Date.now() >= deadlineMs) continue;
      (await Promise.all(page.embeds.map((path) => client.get(home.url + path)))).forEach((result, i) => record(result, page.embeds[i] ?? ''));
      const thinkMs = Math.min(5 * THINK_MS, -Math.log(1 - random()) * THINK_MS);
      await new Promise((resolve) => setTimeout(resolve, Math.min(thinkMs, Math.max(0, deadlineMs - Date.now()))));
    }
  };
  const rows: SecondRow[] = [];
  const sampler = setInterval(() => {
    const second = rows.length + 1;
    const fromMs = startMs + (second - 1) * 1000;
    const inSecond = samples.filter((sample) => sample.atMs >= fromMs && sample.atMs < fromMs + 1000);
    const requestsPerServer = servers.map(() => 0);
    const bytesPerServer = servers.map(() => 0);
    for (const sample of inSecond) {
      const index = sample.server === undefined ? undefined : serverIndex.get(sample.server);
      if (index === undefined || !sample.ok) continue;
      requestsPerServer[index] = (requestsPerServer[index] ?? 0) + 1;
      bytesPerServer[index] = (bytesPerServer[index] ?? 0) + sample.bytes;
    }
    const stats = home.app.webpp.replication?.stats();
    const row: SecondRow = {
      second,
      requestsPerServer,
      bytesPerServer,
      requests: requestsPerServer.reduce((a, b) => a + b, 0),
      bytes: bytesPerServer.reduce((a, b) => a + b, 0),
      p95Ms: Math.round(percentile(inSecond.filter((s) => s.ok).map((s) => s.elapsedMs), 0.95)),
      failed: inSecond.filter((s) => !s.ok).length,
      migrations: stats?.placements ?? 0,
      withdrawals: stats?.withdrawals ?? 0,
    };
    rows.push(row);
    process.stdout.write(`${name} ${String(second).padStart(3)}s  ${String(row.requests).padStart(4)} req/s [${requestsPerServer.join(' ')}]  p95 ${row.p95Ms} ms  migrations ${row.migrations}  withdrawals ${row.withdrawals}  failed ${row.failed}\n`);
  }, 1000);
  await Promise.all(clients.map((client, index) => loop(client, index)));
  clearInterval(sampler);
  for (const client of clients) client.close();
  return { rows, samples: samples.filter((sample) => sample.atMs < deadlineMs) };
}

function settled(phase: { rows: SecondRow[]; samples: Sample[] }, seconds: number): { rps: number; p95Ms: number } {
  const tail = phase.rows.slice(-seconds);
  const fromMs = phase.samples.length === 0 ? 0 : Math.max(...phase.samples.map((s) => s.atMs)) - seconds * 1000;
  const latencies = phase.samples.filter((s) => s.ok && s.atMs >= fromMs).map((s) => s.elapsedMs);
  return { rps: tail.reduce((sum, row) => sum + row.requests, 0) / Math.max(1, tail.length), p95Ms: Math.round(percentile(latencies, 0.95)) };
}

interface PhaseResult {
  rows: SecondRow[];
  samples: Sample[];
  refused: number;
  lazy: unknown;
  flaps: number;
  decisions: unknown;
}

/** One run: the phase without, then the phase with automatic replication, each on fresh servers. */
async function oneRun(run: number, workDir: string): Promise<Record<'without' | 'with', PhaseResult>> {
  const phases = {} as Record<'without' | 'with', PhaseResult>;
  for (const [name, seconds, auto] of [['without', WITHOUT_S, false], ['with', WITH_S, true]] as const) {
    const phaseDir = join(workDir, `run-${run}`, name);
    const siteDir = join(phaseDir, 'home');
    await mkdir(siteDir, { recursive: true });
    const site = await writeSite(siteDir, SEED);
    const servers = await startCluster(phaseDir, siteDir, auto);
    try {
      const phase = await runPhase(`run ${run} ${name}`, site, servers, seconds);
      const stats = servers[0]?.app.webpp.replication?.stats();
      phases[name] = {
        ...phase,
        refused: servers.reduce((sum, server) => sum + server.refused(), 0),
        lazy: servers.slice(1).map((server) => server.app.webpp.lazyReplicas!.stats()),
        flaps: stats?.flaps ?? 0,
        decisions: stats?.decisions ?? [],
      };
    } finally {
      for (const server of servers) await server.close();
    }
  }
  return phases;
}

const median = (values: number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? (sorted[middle] ?? 0) : ((sorted[middle - 1] ?? 0) + (sorted[middle] ?? 0)) / 2;
};
const round1 = (value: number): number => Math.round(value * 10) / 10;
const spread = (values: number[]): { median: number; min: number; max: number; runs: number[] } => ({
  median: round1(median(values)),
  min: round1(Math.min(...values)),
  max: round1(Math.max(...values)),
  runs: values.map(round1),
});

async function main(): Promise<void> {
  const workDir = await mkdtemp(join(tmpdir(), 'webpp-replication-bench-'));
  try {
    const runs: { phases: Record<'without' | 'with', PhaseResult>; without: { rps: number; p95Ms: number }; with: { rps: number; p95Ms: number } }[] = [];
    for (let run = 1; run <= RUNS; run += 1) {
      const phases = await oneRun(run, workDir);
      runs.push({ phases, without: settled(phases.without, SETTLED_S), with: settled(phases.with, SETTLED_S) });
    }
    const ratios = runs.map((run) => run.with.rps / Math.max(1e-9, run.without.rps));
    // The timeline and the plot are those of the run with the median throughput ratio.
    const medianRun = runs[ratios.indexOf([...ratios].sort((a, b) => a - b)[Math.floor((ratios.length - 1) / 2)] ?? 0)] ?? runs[0];
    if (medianRun === undefined) throw new Error('no run');
    const failed = (phase: 'without' | 'with'): number[] => runs.map((run) => run.phases[phase].samples.filter((sample) => !sample.ok).length);
    const lastRow = (run: (typeof runs)[number]): SecondRow | undefined => run.phases.with.rows.at(-1);
    const report = {
      bench: 'replication',
      date: new Date().toISOString(),
      command: 'npm run bench replication',
      setup: { servers: SERVERS, capacity: CAPACITY, clients: CLIENTS, thinkMs: THINK_MS, withoutSeconds: WITHOUT_S, withSeconds: WITH_S, settledSeconds: SETTLED_S, runs: RUNS, seed: SEED, replication: REPLICATION, policy: 'webpp' },
      // Medians over the runs (ranges below); throughput and p95 over the last SETTLED_S of each phase.
      throughput_rps_without: round1(median(runs.map((run) => run.without.rps))),
      throughput_rps_with: round1(median(runs.map((run) => run.with.rps))),
      throughput_ratio: Math.round(median(ratios) * 100) / 100,
      p95_ms_without: Math.round(median(runs.map((run) => run.without.p95Ms))),
      p95_ms_with: Math.round(median(runs.map((run) => run.with.p95Ms))),
      migrations: median(runs.map((run) => lastRow(run)?.migrations ?? 0)),
      withdrawals: median(runs.map((run) => lastRow(run)?.withdrawals ?? 0)),
      // Totals over every run and the whole phase.
      failed_requests: failed('with').reduce((a, b) => a + b, 0),
      failed_requests_without: failed('without').reduce((a, b) => a + b, 0),
      flaps: runs.reduce((sum, run) => sum + run.phases.with.flaps, 0),
      refused_by_capacity_queue: runs.reduce((sum, run) => sum + run.phases.with.refused + run.phases.without.refused, 0),
      ranges: {
        throughput_rps_without: spread(runs.map((run) => run.without.rps)),
        throughput_rps_with: spread(runs.map((run) => run.with.rps)),
        throughput_ratio: spread(ratios),
        p95_ms_without: spread(runs.map((run) => run.without.p95Ms)),
        p95_ms_with: spread(runs.map((run) => run.with.p95Ms)),
        migrations: spread(runs.map((run) => lastRow(run)?.migrations ?? 0)),
        failed_requests_with: spread(failed('with')),
        failed_with_at_seconds: runs.map((run) => run.phases.with.rows.filter((row) => row.failed > 0).map((row) => row.second)),
      },
      lazy_fetch: runs.map((run) => run.phases.with.lazy),
      decisions_of_median_run: medianRun.phases.with.decisions,
      timeline_of_median_run: { without: medianRun.phases.without.rows, with: medianRun.phases.with.rows },
    };
    await writeFile(join(repoRoot, 'docs/benchmarks/replication.json'), `${JSON.stringify(report, null, 2)}\n`);
    await writeFile(join(repoRoot, 'docs/benchmarks/replication.svg'), phaseSvg(medianRun.phases.without.rows, medianRun.phases.with.rows, SERVERS));
    console.log(
      `\n${RUNS} run(s), medians: throughput ${report.throughput_rps_without} → ${report.throughput_rps_with} req/s (×${report.throughput_ratio}, range ${report.ranges.throughput_ratio.min}–${report.ranges.throughput_ratio.max}), ` +
        `p95 ${report.p95_ms_without} → ${report.p95_ms_with} ms, migrations ${report.migrations}, withdrawals ${report.withdrawals}; totals: failed ${report.failed_requests} (without: ${report.failed_requests_without}), flaps ${report.flaps}`,
    );
    console.log('wrote docs/benchmarks/replication.json and docs/benchmarks/replication.svg');
  } finally {
    await rm(workDir, { recursive: true, force: true });
  }
}

await main();
