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
 * mean time per request, and the ratios to the upstream render. Writes docs/benchmarks/peer-hop.json.
 */
import { spawn } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { Agent, request } from 'node:http';
import { createServer } from 'node:net';
import { loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import { startReplicaServer, type ReplicaServer } from '../src/server.js';
import { rankServers } from '../src/cache/cluster/rendezvous.js';

const ROUNDS = Number(process.env.WEBPP_BENCH_ROUNDS ?? 5);
const REQUESTS = Number(process.env.WEBPP_BENCH_REQUESTS ?? 300);
const WARMUP_REQUESTS = 30;
const PAGES = 1000;
const ADMIN_TOKEN = 'bench-admin-token-0123456789';
const CLUSTER_SECRET = 'bench-cluster-secret-0123456789';
const UPSTREAM = fileURLToPath(new URL('./cache/upstream-app.ts', import.meta.url));
const OUTPUT = fileURLToPath(new URL('../../docs/benchmarks/peer-hop.json', import.meta.url));

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

/** Mean ms per request over `count` sequential requests (after a short warm-up). */
async function meanMs(url: string, count: number): Promise<number> {
  for (let index = 0; index < WARMUP_REQUESTS; index += 1) await get(url);
  const startMs = performance.now();
  for (let index = 0; index < count; index += 1) {
    const status = await get(url);
    if (status !== 200) throw new Error(`${url}: ${status}`);
  }
  return (performance.now() - startMs) / count;
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
          memoryCacheHotCopies: 1,
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
    const samples: Record<keyof typeof setups, number[]> = { local_hit: [], peer_hit: [], upstream: [] };
    for (let index = 0; index < ROUNDS; index += 1) {
      for (const [name, url] of Object.entries(setups) as [keyof typeof setups, string][]) samples[name].push(await meanMs(url, REQUESTS));
      console.log(`round ${index + 1}: local ${samples.local_hit.at(-1)?.toFixed(3)} ms, peer ${samples.peer_hit.at(-1)?.toFixed(3)} ms, upstream ${samples.upstream.at(-1)?.toFixed(3)} ms, load ${loadavg()[0]?.toFixed(1)}`);
    }
    const askerServer = servers[0] as ReplicaServer;
    const { peerHits, localHits } = askerServer.app.webpp.cache.summary();
    if (localHits > 0) throw new Error(`the asking server answered ${localHits} requests from its own memory: not a peer-hit measurement`);
    const rows = Object.fromEntries(
      (Object.keys(samples) as (keyof typeof samples)[]).map((name) => [
        name,
        { ms: round(median(samples[name])), range_ms: [round(Math.min(...samples[name])), round(Math.max(...samples[name]))] },
      ]),
    );
    const ratios = {
      peer_hit_over_upstream: round(median(samples.peer_hit) / median(samples.upstream), 2),
      local_hit_over_upstream: round(median(samples.local_hit) / median(samples.upstream), 2),
      peer_hit_over_local_hit: round(median(samples.peer_hit) / median(samples.local_hit), 2),
    };
    console.table(rows);
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
