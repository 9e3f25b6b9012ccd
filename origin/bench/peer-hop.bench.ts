/**
 * `npm run bench peer-hop`: what one cooperative miss costs (issue 15), in isolation. One
 * client, one request at a time over keep-alive HTTP/1.1, against three setups in this
 * process, all in front of the cache benchmark's upstream (cache/upstream-app.ts: two SQLite
 * queries and a render per page, in its own process):
 * - local hit: the page in the asked server's memory;
 * - peer hit: the page in its home's memory, asked of the other server, which does not keep
 *   it (`memoryCacheHotCopies` 1: only the home keeps hot objects) — a signed peer GET;
 * - upstream: a server without the memory cache, which renders the page upstream every time.
 * ROUNDS rounds of REQUESTS requests each, the setups interleaved; medians and ranges of the
 * wall time and of the CPU time per request (this process: client and servers, plus the
 * upstream process), and their ratios. Writes docs/benchmarks/peer-hop.json.
 */
import { spawn } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import { Agent, request } from 'node:http';
import { loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import { startReplicaServer, type ReplicaServer } from '../src/server.js';
import { rankServers } from '../src/cache/cluster/rendezvous.js';
import { freePort } from '../test/helpers.js';
import { WEBPP_INTERNALS } from '../src/options/internals.js';

const ROUNDS = Number(process.env.WEBPP_BENCH_ROUNDS ?? 5);
const REQUESTS = Number(process.env.WEBPP_BENCH_REQUESTS ?? 300);
const WARMUP_REQUESTS = 30;
const PAGES = 1000;
const ADMIN_TOKEN = 'bench-admin-token-0123456789';
const CLUSTER_SECRET = 'bench-cluster-secret-0123456789';
const UPSTREAM = fileURLToPath(new URL('./cache/upstream-app.ts', import.meta.url));
const OUTPUT = fileURLToPath(new URL('../../docs/benchmarks/peer-hop.json', import.meta.url));

const agent = new Agent({ keepAlive: true, maxSockets: 1 });

function get(url: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const outgoing = request(url, { agent, timeout: 30_000 }, (response) => {
      response.resume();
      response.on('end', () => resolve(response.statusCode ?? 0));
      response.on('error', reject);
    });
    outgoing.on('timeout', () => outgoing.destroy(new Error('request timed out')));
    outgoing.on('error', reject);
    outgoing.end();
  });
}

/** CPU time (user + system) a process has used so far, in ms, from /proc (Linux; clock ticks of 10 ms). */
async function processCpuMs(pid: number | undefined): Promise<number> {
  if (pid === undefined) return Number.NaN;
  const fields = (await readFile(`/proc/${pid}/stat`, 'utf8')).split(') ')[1]?.split(' ') ?? [];
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

/**
 * Over `count` sequential requests (after a short warm-up): mean wall time per request, and
 * CPU time per request of this process (client and servers) plus the upstream's — steadier
 * than wall time on a shared machine.
 */
async function measure(url: string, count: number, upstreamPid: number | undefined): Promise<{ wallMs: number; cpuMs: number }> {
  for (let index = 0; index < WARMUP_REQUESTS; index += 1) await get(url);
  const cpuBefore = process.cpuUsage();
  const upstreamBefore = await processCpuMs(upstreamPid);
  const startMs = performance.now();
  for (let index = 0; index < count; index += 1) {
    const status = await get(url);
    if (status !== 200) throw new Error(`${url}: ${status}`);
  }
  const wallMs = (performance.now() - startMs) / count;
  const own = process.cpuUsage(cpuBefore);
  const upstreamMs = (await processCpuMs(upstreamPid)) - upstreamBefore;
  return { wallMs, cpuMs: ((own.user + own.system) / 1000 + upstreamMs) / count };
}

const median = (values: number[]): number => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? Number.NaN;
const round = (value: number, digits = 3): number => Number(value.toFixed(digits));

async function main(): Promise<void> {
  const upstream = spawn(process.execPath, ['--import', 'tsx', UPSTREAM, String(PAGES)], { stdio: ['ignore', 'pipe', 'inherit'] });
  const servers: ReplicaServer[] = [];
  try {
    const upstreamPort = await new Promise<number>((resolve, reject) => {
      upstream.once('exit', (code) => reject(new Error(`upstream exited with ${code}`)));
      upstream.stdout.on('data', (chunk: Buffer) => {
        const match = /READY (\d+)/.exec(chunk.toString());
        if (match !== null) resolve(Number(match[1]));
      });
    });
    const proxyUpstream = `http://127.0.0.1:${upstreamPort}`;
    // Two cooperating servers: each must know the other's URL before it starts.
    const ports = [await freePort(), await freePort()];
    const urls = ports.map((port) => `http://127.0.0.1:${port}`);
    for (const [index, url] of urls.entries()) {
      servers.push(
        await startReplicaServer({
          proxyUpstream,
          port: ports[index],
          publicUrl: url,
          logicalOrigin: urls[0],
          peers: urls.filter((other) => other !== url),
          clusterSecret: CLUSTER_SECRET,
          adminToken: ADMIN_TOKEN,
          injectScript: false,
          memoryCacheBytes: 64 * 1024 * 1024,
          [WEBPP_INTERNALS]: { memoryCacheHotCopies: 1 },
        }),
      );
    }
    const plain = await startReplicaServer({ proxyUpstream, adminToken: ADMIN_TOKEN, injectScript: false });
    servers.push(plain);
    const [asker, home] = urls as [string, string];
    // A page of the most common size (4 KB, site.ts) homed at the second server.
    const page = Array.from({ length: PAGES }, (_, index) => `/p/${index}.html`).find((path) => rankServers(path, urls)[0] === home) as string;
    await get(`${home}${page}`);
    const setups = { local_hit: `${home}${page}`, peer_hit: `${asker}${page}`, upstream: `${plain.url}${page}` };
    type Setup = keyof typeof setups;
    const wall: Record<Setup, number[]> = { local_hit: [], peer_hit: [], upstream: [] };
    const cpu: Record<Setup, number[]> = { local_hit: [], peer_hit: [], upstream: [] };
    for (let index = 0; index < ROUNDS; index += 1) {
      for (const [name, url] of Object.entries(setups) as [Setup, string][]) {
        const result = await measure(url, REQUESTS, upstream.pid);
        wall[name].push(result.wallMs);
        cpu[name].push(result.cpuMs);
      }
      const line = (name: Setup): string => `${wall[name].at(-1)?.toFixed(3)} ms (CPU ${cpu[name].at(-1)?.toFixed(3)})`;
      console.log(`round ${index + 1}: local ${line('local_hit')}, peer ${line('peer_hit')}, upstream ${line('upstream')}, load ${loadavg()[0]?.toFixed(1)}`);
    }
    const askerServer = servers[0] as ReplicaServer;
    const { peerHits, localHits } = askerServer.app.webpp.cache.summary();
    if (localHits > 0) throw new Error(`the asking server answered ${localHits} requests from its own memory: not a peer-hit measurement`);
    const names = Object.keys(setups) as Setup[];
    const summary = (values: number[]): { median: number; range: [number, number] } => ({ median: round(median(values)), range: [round(Math.min(...values)), round(Math.max(...values))] });
    const rows = Object.fromEntries(names.map((name) => [name, { wall_ms: summary(wall[name]), cpu_ms: summary(cpu[name]) }]));
    const ratio = (a: number[], b: number[]): number => round(median(a) / median(b), 2);
    const ratios = {
      cpu_peer_hit_over_upstream: ratio(cpu.peer_hit, cpu.upstream),
      cpu_local_hit_over_upstream: ratio(cpu.local_hit, cpu.upstream),
      cpu_peer_hit_over_local_hit: ratio(cpu.peer_hit, cpu.local_hit),
      wall_peer_hit_over_upstream: ratio(wall.peer_hit, wall.upstream),
      wall_local_hit_over_upstream: ratio(wall.local_hit, wall.upstream),
    };
    console.log(JSON.stringify(rows));
    console.log('ratios:', ratios, `(asker: ${peerHits} peer hits)`);
    const document = { benchmark: 'peer-hop', generatedAt: new Date().toISOString(), settings: { rounds: ROUNDS, requestsPerRound: REQUESTS, page, loadAverage: loadavg()[0] }, rows, ratios };
    await writeFile(OUTPUT, `${JSON.stringify(document, null, 2)}\n`);
    console.log(`wrote ${OUTPUT}`);
  } finally {
    for (const server of servers) await server.close();
    upstream.kill();
  }
}

await main();
