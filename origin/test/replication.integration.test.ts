/**
 * Load-driven replication with three real servers on loopback (a home, two peers), with
 * short T_* periods: the home, loaded by real requests, places its hot resources on the
 * least-loaded peer through the directory; the placement reaches every server and a
 * client's bindings; pages and pinned paths stay home; the rate limits hold (one placement
 * per T_st per home, one per T_coop per co-op); every decision is in the stats and
 * /metrics; and when a co-op dies its automatic replicas are recalled from the directory.
 * The co-op then serves it (its lazy fetch is tested in lazy-replication.integration.test.ts).
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startReplicaServer, type ReplicaServer } from '../src/server.js';
import type { WebppOriginOptions } from '../src/options.js';
import { FAST_REPLICATION, TRIO as NAMES, type TrioName as Name, auth, bindingMap, removeTempDirs, tempDir, trioAddresses, trioMember, waitFor } from './helpers.js';

const T_ST_MS = 150;
const T_COOP_MS = 1200;

let ports: Record<Name, number>;
let urls: Record<Name, string>;
const servers = {} as Record<Name, ReplicaServer | undefined>;
let root: string;

function server(name: Name): ReplicaServer {
  const found = servers[name];
  if (found === undefined) throw new Error(`${name} is not running`);
  return found;
}

async function get(name: Name, path: string, times: number): Promise<void> {
  for (let i = 0; i < times; i += 1) await (await fetch(`http://127.0.0.1:${ports[name]}${path}`)).arrayBuffer();
}

async function startCluster(prefix: string, tuning: Partial<WebppOriginOptions>): Promise<void> {
  ({ ports, urls } = await trioAddresses());
  for (const name of NAMES) {
    servers[name] = await startReplicaServer({
      ...trioMember(name, ports, urls),
      ...FAST_REPLICATION,
      root,
      dataDir: await tempDir(`${prefix}-${name}-`),
      peerMissedPingsForDown: 3,
      autoReplicatePinned: ['/', '/pinned.js'],
      replicationIntervalMs: T_ST_MS,
      replicationCoopIntervalMs: T_COOP_MS,
      ...tuning,
    });
  }
}

async function stopCluster(): Promise<void> {
  for (const name of NAMES) {
    await servers[name]?.close();
    servers[name] = undefined;
  }
}

/** Generates load on a with replication off, then switches it on (so that the first decision sees all of it). */
async function loadHomeThenEnable(): Promise<void> {
  const controller = server('a').app.webpp.replication;
  if (controller === undefined) throw new Error('no replication controller');
  controller.enabled = false;
  await Promise.all([get('a', '/img/hot.png', 120), get('a', '/app.js', 30), get('a', '/pinned.js', 200), get('a', '/index.html', 200)]);
  await new Promise((resolve) => setTimeout(resolve, 3 * T_ST_MS));
  expect(controller.stats()).toMatchObject({ placements: 0, lastReason: 'automatic replication is off on this server' });
  expect(server('a').app.webpp.directory.size).toBe(0);
  controller.enabled = true;
}

beforeAll(async () => {
  root = await tempDir('webpp-replication-site-');
  await mkdir(`${root}/img`);
  await writeFile(`${root}/index.html`, '<!doctype html><title>t</title><img src="/img/hot.png"><script src="/app.js"></script>');
  await writeFile(`${root}/img/hot.png`, Buffer.alloc(4000, 1));
  await writeFile(`${root}/app.js`, 'console.log(1);\n'.repeat(100));
  await writeFile(`${root}/pinned.js`, 'console.log(2);\n');
  await writeFile(`${root}/b-own.css`, 'body{}\n');
});

afterAll(async () => {
  await stopCluster();
  await removeTempDirs();
});

describe('load-driven replication across three servers', () => {
  beforeAll(() => startCluster('webpp-replication', { replicationWindowMs: 20_000, replicationHomeMs: 60_000 }), 30_000);
  afterAll(stopCluster);

  it('places the hot resource on the least-loaded peer, and every server and client sees it', async () => {
    // b has some load of its own, c none: c is the least-loaded peer.
    await get('b', '/b-own.css', 20);
    await waitFor('a to hold b\'s load record', () => (server('a').app.webpp.peerState?.record(urls.b)?.record.requestsPerSecond ?? 0) > 0);
    // Off (operator control): the load builds up and nothing is placed; then on.
    await loadHomeThenEnable();
    const hot = `${urls.a}/img/hot.png`;
    for (const name of NAMES) {
      await waitFor(`${name} to list c as a replica of /img/hot.png`, () => server(name).app.webpp.directory.lookup(hot)?.physicalUrls.includes(`${urls.c}/img/hot.png`));
    }
    const placement = server('b').app.webpp.directory.placement(hot, `${urls.c}/img/hot.png`);
    expect(placement?.home).toBe(urls.a);
    expect(placement?.sizeBytes).toBe(4000);
    // The first placement: the hottest eligible resource, on the least-loaded peer.
    const first = server('a').app.webpp.replication?.stats().decisions[0];
    expect(first).toMatchObject({ kind: 'place', logical: hot, coop: urls.c });
    // A client loading the page is told where the image lives.
    const page = await fetch(`http://127.0.0.1:${ports.a}/index.html`);
    await page.text();
    const bound = bindingMap(page.headers.get('webpp-bindings') ?? undefined)[hot];
    expect(bound?.[0]).toBe(hot);
    expect(bound).toContain(`${urls.c}/img/hot.png`);
    // The whole chain: the co-op serves it (fetched lazily from the home, dcws-lazy's part).
    const fromCoop = await fetch(`http://127.0.0.1:${ports.c}/img/hot.png`);
    expect(fromCoop.status).toBe(200);
    expect(Buffer.from(await fromCoop.arrayBuffer()).equals(Buffer.alloc(4000, 1))).toBe(true);
  });

  it('never places pages or pinned entry points, and keeps to the rate limits', async () => {
    // a stays loaded (c serves nothing in this test): placements continue at the allowed pace.
    const deadline = Date.now() + 3 * T_COOP_MS;
    while (Date.now() < deadline) await get('a', '/img/hot.png', 10);
    const { decisions } = server('a').app.webpp.replication?.stats() ?? { decisions: [] };
    const places = decisions.filter((decision) => decision.kind === 'place');
    expect(places.length).toBeGreaterThanOrEqual(2);
    const placed = places.map((decision) => new URL(decision.logical).pathname);
    expect(placed).not.toContain('/index.html');
    expect(placed).not.toContain('/pinned.js');
    expect(placed).not.toContain('/');
    for (let i = 1; i < places.length; i += 1) {
      expect((places[i]?.atMs ?? 0) - (places[i - 1]?.atMs ?? 0)).toBeGreaterThanOrEqual(T_ST_MS);
    }
    for (const coop of [urls.b, urls.c]) {
      const onCoop = places.filter((decision) => decision.coop === coop);
      for (let i = 1; i < onCoop.length; i += 1) expect((onCoop[i]?.atMs ?? 0) - (onCoop[i - 1]?.atMs ?? 0)).toBeGreaterThanOrEqual(T_COOP_MS);
    }
    // Every decision, with its reason, is in the stats and /metrics.
    const stats = (await (await fetch(`http://127.0.0.1:${ports.a}/.well-known/webpp/stats`, { headers: auth })).json()) as {
      origin: { replication: { decisions: { placements: number; flaps: number; decisions: { reason: string }[] } } };
    };
    expect(stats.origin.replication.decisions.placements).toBe(places.length);
    expect(stats.origin.replication.decisions.flaps).toBe(0);
    expect(stats.origin.replication.decisions.decisions[0]?.reason).toMatch(/cluster mean/);
    const metrics = await (await fetch(`http://127.0.0.1:${ports.a}/.well-known/webpp/metrics`, { headers: auth })).text();
    expect(metrics).toContain(`webpp_replication_decisions_total{kind="place"} ${places.length}`);
    expect(metrics).toContain(`webpp_peer_up{peer="${urls.c}"} 1`);
  }, 20_000);

  it('recalls the automatic replicas of a co-op that stops answering', async () => {
    const onC = () => server('b').app.webpp.directory.automaticReplicas().filter((replica) => replica.physical.startsWith(urls.c));
    expect(onC().length).toBeGreaterThan(0);
    await server('c').close();
    servers.c = undefined;
    await waitFor('a to recall every replica on c, and b to learn it', () => onC().length === 0, { timeoutMs: 10_000 });
    expect(server('a').app.webpp.directory.entries().flatMap((entry) => entry.physical).filter((url) => url.startsWith(urls.c))).toEqual([]);
    const recalls = server('a').app.webpp.replication?.stats().decisions.filter((decision) => decision.kind === 'recall') ?? [];
    expect(recalls.length).toBeGreaterThan(0);
    expect(recalls.every((decision) => decision.coop === urls.c)).toBe(true);
  }, 20_000);
});

describe('taking replicas back', () => {
  const T_HOME_MS = 1500;
  beforeAll(() => startCluster('webpp-withdrawal', { replicationWindowMs: 2000, replicationHomeMs: T_HOME_MS }), 30_000);
  afterAll(stopCluster);

  it('withdraws a replica once the load has fallen, not before T_home, and does not place it again', async () => {
    await loadHomeThenEnable();
    const controller = server('a').app.webpp.replication;
    const hot = `${urls.a}/img/hot.png`;
    const placed = await waitFor('a placement of /img/hot.png', () => controller?.stats().decisions.find((decision) => decision.kind === 'place' && decision.logical === hot));
    // No more requests: the load falls to 0 within one window.
    const withdrawn = await waitFor('the withdrawal', () => controller?.stats().decisions.find((decision) => decision.kind === 'withdraw' && decision.logical === hot), { timeoutMs: 10_000 });
    expect(withdrawn.coop).toBe(placed.coop);
    expect(withdrawn.reason).toMatch(/load fell/);
    expect(withdrawn.atMs - placed.atMs).toBeGreaterThanOrEqual(T_HOME_MS);
    // The placements had created the entry: once every replica is taken back, so is the entry, everywhere.
    for (const name of NAMES) await waitFor(`${name} to drop the entry`, () => server(name).app.webpp.directory.lookup(hot) === undefined, { timeoutMs: 10_000 });
    await new Promise((resolve) => setTimeout(resolve, 5 * T_ST_MS));
    const stats = controller?.stats();
    expect(stats?.decisions.filter((decision) => decision.logical === hot && decision.kind === 'place' && decision.coop === withdrawn.coop)).toHaveLength(1);
    expect(stats?.flaps).toBe(0);
  }, 30_000);
});
