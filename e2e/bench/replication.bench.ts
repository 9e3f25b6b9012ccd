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
 *   REPLICATION_CLIENTS       concurrent clients (default 10)
 *   REPLICATION_THINK_MS      mean think time between a client's page visits, ms (default 500)
 *   REPLICATION_WITHOUT_S     length of the phase without replication, s (default 30)
 *   REPLICATION_WITH_S        length of the phase with replication, s (default 100)
 *   REPLICATION_SETTLED_S     tail of each phase the figures are taken over, s (default 20)
 *   REPLICATION_SEED          seed of the site and workload (default 1)
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

const envNumber = (name: string, fallback: number): number => {
  const value = Number(process.env[name]);
  return Number.isFinite(value) && value > 0 ? value : fallback;
};
const CLIENTS = envNumber('REPLICATION_CLIENTS', 10);
/** Mean think time between a client's page visits (exponential), ms. */
const THINK_MS = envNumber('REPLICATION_THINK_MS', 500);
const WITHOUT_S = envNumber('REPLICATION_WITHOUT_S', 30);
const WITH_S = envNumber('REPLICATION_WITH_S', 100);
const SETTLED_S = envNumber('REPLICATION_SETTLED_S', 20);
const SEED = envNumber('REPLICATION_SEED', 1);
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
  replicationPeerMaxAgeMs: 5000,
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

async function main(): Promise<void> {
  const workDir = await mkdtemp(join(tmpdir(), 'webpp-replication-bench-'));
  try {
    const phases: Record<'without' | 'with', { rows: SecondRow[]; samples: Sample[]; refused: number; lazy: unknown; flaps: number; decisions: unknown }> = {} as never;
    for (const [name, seconds, auto] of [['without', WITHOUT_S, false], ['with', WITH_S, true]] as const) {
      const phaseDir = join(workDir, name);
      const siteDir = join(phaseDir, 'home');
      await mkdir(siteDir, { recursive: true });
      const site = await writeSite(siteDir, SEED);
      const servers = await startCluster(phaseDir, siteDir, auto);
      try {
        const phase = await runPhase(name, site, servers, seconds);
        const stats = servers[0]?.app.webpp.replication?.stats();
        phases[name] = {
          ...phase,
          refused: servers.reduce((sum, server) => sum + server.refused(), 0),
          lazy: servers.slice(1).map((server) => server.app.webpp.lazyReplicas.stats()),
          flaps: stats?.flaps ?? 0,
          decisions: stats?.decisions ?? [],
        };
      } finally {
        for (const server of servers) await server.close();
      }
    }
    const without = settled(phases.without, SETTLED_S);
    const withReplication = settled(phases.with, SETTLED_S);
    const last = phases.with.rows.at(-1);
    const failedWithout = phases.without.samples.filter((s) => !s.ok).length;
    const failedWith = phases.with.samples.filter((s) => !s.ok).length;
    const report = {
      bench: 'replication',
      date: new Date().toISOString(),
      command: 'npm run bench replication',
      setup: { servers: SERVERS, capacity: CAPACITY, clients: CLIENTS, withoutSeconds: WITHOUT_S, withSeconds: WITH_S, settledSeconds: SETTLED_S, seed: SEED, replication: REPLICATION, policy: 'webpp' },
      throughput_rps_without: Math.round(without.rps * 10) / 10,
      throughput_rps_with: Math.round(withReplication.rps * 10) / 10,
      throughput_ratio: Math.round((withReplication.rps / Math.max(1e-9, without.rps)) * 100) / 100,
      p95_ms_without: without.p95Ms,
      p95_ms_with: withReplication.p95Ms,
      migrations: last?.migrations ?? 0,
      withdrawals: last?.withdrawals ?? 0,
      failed_requests: failedWith,
      failed_requests_without: failedWithout,
      refused_by_capacity_queue: phases.with.refused + phases.without.refused,
      flaps: phases.with.flaps,
      requests_with: phases.with.samples.length,
      requests_without: phases.without.samples.length,
      lazy_fetch: phases.with.lazy,
      decisions: phases.with.decisions,
      timeline: { without: phases.without.rows, with: phases.with.rows },
    };
    await writeFile(join(repoRoot, 'docs/benchmarks/replication.json'), `${JSON.stringify(report, null, 2)}\n`);
    await writeFile(join(repoRoot, 'docs/benchmarks/replication.svg'), phaseSvg(phases.without.rows, phases.with.rows, SERVERS));
    console.log(
      `\nthroughput ${report.throughput_rps_without} → ${report.throughput_rps_with} req/s (×${report.throughput_ratio}), p95 ${report.p95_ms_without} → ${report.p95_ms_with} ms, ` +
        `migrations ${report.migrations}, withdrawals ${report.withdrawals}, failed ${failedWith} (without: ${failedWithout}), flaps ${report.flaps}`,
    );
    console.log('wrote docs/benchmarks/replication.json and docs/benchmarks/replication.svg');
  } finally {
    await rm(workDir, { recursive: true, force: true });
  }
}

await main();
