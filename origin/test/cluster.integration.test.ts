/**
 * Three real replica servers on loopback: random concurrent POST / DELETE on all of them,
 * one server cut off (it keeps taking changes while isolated), then killed and restarted
 * from its data folder; every directory must end identical and agree with what each
 * server actually stores. Then PUT propagation with versions.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { createRandom } from '@webpp/netem/model';
import { startReplicaServer, type ReplicaServer } from '../src/server.js';
import { signClusterRequest } from '../src/http/auth.js';
import { ADMIN_TOKEN, CLUSTER_SECRET, auth, removeTempDirs, tempDir, waitFor } from './helpers.js';
import { TcpForwarder } from './fixtures/tcp-forwarder.js';

const NAMES = ['a', 'b', 'c'] as const;
type Name = (typeof NAMES)[number];
const KEYS = 12;
const SYNC_INTERVAL_MS = 150;

interface Node {
  name: Name;
  dataDir: string;
  server: ReplicaServer | undefined;
  /** Stable public URL (a forwarder), whatever port the server currently has. */
  publicForwarder: TcpForwarder;
  /** Forwarders this node uses to reach each peer. */
  outgoing: Map<Name, TcpForwarder>;
}

const nodes = new Map<Name, Node>();
const forwarders: TcpForwarder[] = [];

afterAll(async () => {
  for (const node of nodes.values()) await node.server?.close();
  for (const forwarder of forwarders) await forwarder.close();
  await removeTempDirs();
});

async function forwarder(): Promise<TcpForwarder> {
  const created = new TcpForwarder(1);
  await created.listen();
  forwarders.push(created);
  return created;
}

async function start(node: Node): Promise<void> {
  node.server = await startReplicaServer({
    publicUrl: node.publicForwarder.url,
    // One logical origin for the cluster, so servers race on the same logical URLs.
    logicalOrigin: nodes.get('a')?.publicForwarder.url,
    dataDir: node.dataDir,
    adminToken: ADMIN_TOKEN,
    clusterSecret: CLUSTER_SECRET,
    peers: [...node.outgoing.values()].map((f) => f.url),
    // Peers reach this node through their own forwarders (to cut links one direction at a time).
    aliasUrls: [...nodes.values()].flatMap((other) => other.outgoing.get(node.name)?.url ?? []),
    syncIntervalMs: SYNC_INTERVAL_MS,
    peerTimeoutMs: 2000,
    injectScript: false,
  });
  node.publicForwarder.retarget(node.server.port);
  for (const other of nodes.values()) other.outgoing.get(node.name)?.retarget(node.server.port);
}

function isolate(name: Name, cut: boolean): void {
  const node = nodes.get(name) as Node;
  const touched = [node.publicForwarder, ...node.outgoing.values(), ...[...nodes.values()].map((other) => other.outgoing.get(name)).filter((f) => f !== undefined)];
  for (const f of touched) {
    if (cut) f.cut();
    else f.heal();
  }
}

async function randomOperations(random: () => number, on: Name[], count: number, concurrency: number): Promise<number[]> {
  const statuses: number[] = [];
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < count) {
      const index = next;
      next += 1;
      const name = on[Math.floor(random() * on.length)] as Name;
      const key = Math.floor(random() * KEYS);
      const create = random() < 0.6;
      const server = nodes.get(name)?.server as ReplicaServer;
      const response = await fetch(`http://127.0.0.1:${server.port}/.well-known/webpp/replicas/r${key}.txt`, {
        method: create ? 'POST' : 'DELETE',
        headers: { ...auth, 'content-type': 'text/plain' },
        body: create ? `r${key} from ${name} op ${index}` : undefined,
      });
      await response.arrayBuffer();
      statuses.push(response.status);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  return statuses;
}

async function directoryOf(name: Name): Promise<string> {
  const server = nodes.get(name)?.server as ReplicaServer;
  const listing = (await (await fetch(`http://127.0.0.1:${server.port}/.well-known/webpp/directory`)).json()) as { entries: unknown };
  return JSON.stringify(listing.entries);
}

describe('directory propagation between three servers', () => {
  it('converges after concurrent changes, a partition and a restart', async () => {
    for (const name of NAMES) {
      nodes.set(name, { name, dataDir: await tempDir(`webpp-cluster-${name}-`), server: undefined, publicForwarder: await forwarder(), outgoing: new Map() });
    }
    for (const node of nodes.values()) {
      for (const peer of NAMES) if (peer !== node.name) node.outgoing.set(peer, await forwarder());
    }
    for (const node of nodes.values()) await start(node);
    // Seeded, so every run issues the same operations.
    const random = createRandom(20_240_601);

    // Phase 1: everyone connected.
    const phase1 = await randomOperations(random, ['a', 'b', 'c'], 60, 6);
    // Phase 2: c is cut off and keeps taking changes on its own.
    isolate('c', true);
    const phase2 = await randomOperations(random, ['a', 'b', 'c'], 60, 6);
    const onlyC = await fetch(`http://127.0.0.1:${nodes.get('c')?.server?.port}/.well-known/webpp/replicas/only-c.txt`, { method: 'POST', headers: auth, body: 'c' });
    expect(onlyC.status).toBe(201);
    const logicalOnlyC = `${nodes.get('a')?.publicForwarder.url}/only-c.txt`;
    // Phase 3: c is stopped; a and b go on.
    await nodes.get('c')?.server?.close();
    const phase3 = await randomOperations(random, ['a', 'b'], 40, 4);
    expect(nodes.get('a')?.server?.app.webpp.directory.lookup(logicalOnlyC)).toBeUndefined(); // the cut held
    // Phase 4: c restarts from its data folder and the partition heals.
    await start(nodes.get('c') as Node);
    expect(nodes.get('c')?.server?.app.webpp.directory.lookup(logicalOnlyC)?.physicalUrls).toEqual([`${nodes.get('c')?.publicForwarder.url}/only-c.txt`]);
    isolate('c', false);

    for (const status of [...phase1, ...phase2, ...phase3]) expect([200, 201, 404, 409]).toContain(status);
    expect(phase1.filter((status) => status === 201).length).toBeGreaterThan(5);

    await waitFor(
      'identical directories on a, b and c',
      async () => {
        const listings = await Promise.all(NAMES.map(directoryOf));
        return new Set(listings).size === 1 ? listings[0] : undefined;
      },
      { timeoutMs: 30_000, intervalMs: 100 },
    );
    const versions = NAMES.map((name) => nodes.get(name)?.server?.app.webpp.directory.version);
    expect(new Set(versions).size).toBe(1);

    // The converged directory agrees with what each server stores: its own pair for r<k>
    // is listed exactly when it holds r<k>.
    for (const name of NAMES) {
      const node = nodes.get(name) as Node;
      const app = node.server?.app;
      for (let key = 0; key < KEYS; key += 1) {
        const logical = `${nodes.get('a')?.publicForwarder.url}/r${key}.txt`;
        for (const holder of NAMES) {
          const holderNode = nodes.get(holder) as Node;
          const physical = `${holderNode.publicForwarder.url}/r${key}.txt`;
          const listed = app?.webpp.directory.has(logical, physical) ?? false;
          const stored = holderNode.server?.app.webpp.store.get(`/r${key}.txt`) !== undefined;
          expect({ on: name, holder, key, listed }).toEqual({ on: name, holder, key, listed: stored });
        }
      }
      expect(app?.webpp.directory.lookup(logicalOnlyC)?.physicalUrls).toEqual([`${nodes.get('c')?.publicForwarder.url}/only-c.txt`]);
    }
  }, 120_000);
});

describe('replica updates between servers', () => {
  it('pushes PUT to every other replica; an older version never overwrites a newer one', async () => {
    const servers: ReplicaServer[] = [];
    try {
      const dirs = [await tempDir(), await tempDir(), await tempDir()];
      // Three servers sharing one logical origin (the first); peers learn the directory by sync.
      const first = await startReplicaServer({ dataDir: dirs[0], adminToken: ADMIN_TOKEN, clusterSecret: CLUSTER_SECRET, syncIntervalMs: 100, injectScript: false });
      servers.push(first);
      for (const dir of dirs.slice(1)) {
        servers.push(
          await startReplicaServer({
            dataDir: dir,
            adminToken: ADMIN_TOKEN,
            clusterSecret: CLUSTER_SECRET,
            logicalOrigin: first.url,
            peers: [first.url],
            syncIntervalMs: 100,
            injectScript: false,
          }),
        );
      }
      // The first server only learns of its peers' replicas through their pushes and anti-entropy (they list it as a peer).
      const post = (server: ReplicaServer, body: string) =>
        fetch(`${server.url}/.well-known/webpp/replicas/doc.txt`, { method: 'POST', headers: { ...auth, 'content-type': 'text/plain' }, body });
      for (const server of servers) expect((await post(server, 'v1')).status).toBe(201);
      await waitFor('all three replicas listed on the first server', () => first.app.webpp.directory.lookup(`${first.url}/doc.txt`)?.physicalUrls.length === 3);

      const put = await fetch(`${first.url}/.well-known/webpp/replicas/doc.txt`, { method: 'PUT', headers: { ...auth, 'content-type': 'text/plain' }, body: 'v2' });
      expect(put.status).toBe(200);
      const result = (await put.json()) as { version: string; pushes: { ok: boolean; physicalUrl: string }[] };
      expect(result.pushes.map((push) => push.ok)).toEqual([true, true]);
      for (const server of servers) {
        const response = await fetch(`${server.url}/doc.txt`);
        expect(await response.text()).toBe('v2');
        expect(response.headers.get('webpp-replica-version')).toBe(result.version);
        // Every copy of one version carries the same validators, so that a worker can resume
        // a body broken off by one replica on another (Last-Modified is the version's time).
        expect(response.headers.get('last-modified')).toBe(new Date(Number(result.version.split('@')[0])).toUTCString());
      }

      // A push that arrives late (here 1.1 s after the version was made) still dates the copy by its version.
      await new Promise((resolve) => setTimeout(resolve, 1100));
      const late = servers[2] as ReplicaServer;
      const latePath = '/.well-known/webpp/peer/replicas/doc.txt';
      const lateTimeMs = Number(result.version.split('@')[0]) + 1;
      const lateBody = new TextEncoder().encode('v3');
      const lateHeaders = { 'content-type': 'text/plain', 'webpp-replica-version': `${lateTimeMs}@${first.url}`, 'webpp-logical-url': `${first.url}/doc.txt` };
      const latePush = await fetch(`${late.url}${latePath}`, {
        method: 'PUT',
        headers: { ...lateHeaders, 'webpp-cluster-auth': signClusterRequest(CLUSTER_SECRET, 'PUT', `${late.url}${latePath}`, lateBody, { headers: lateHeaders }) },
        body: lateBody,
      });
      expect(latePush.status).toBe(200);
      const lateCopy = await fetch(`${late.url}/doc.txt`);
      expect(await lateCopy.text()).toBe('v3');
      expect(lateCopy.headers.get('last-modified')).toBe(new Date(lateTimeMs).toUTCString());

      // A delayed push of an older version (replayed with a valid signature) is refused.
      const target = servers[1] as ReplicaServer;
      const path = '/.well-known/webpp/peer/replicas/doc.txt';
      const body = new TextEncoder().encode('stale');
      const staleHeaders = { 'content-type': 'text/plain', 'webpp-replica-version': `1@${first.url}`, 'webpp-logical-url': `${first.url}/doc.txt` };
      const stale = await fetch(`${target.url}${path}`, {
        method: 'PUT',
        headers: {
          ...staleHeaders,
          'webpp-cluster-auth': signClusterRequest(CLUSTER_SECRET, 'PUT', `${target.url}${path}`, body, { headers: staleHeaders }),
        },
        body,
      });
      expect(stale.status).toBe(409);
      expect(await (await fetch(`${target.url}/doc.txt`)).text()).toBe('v2');

      // Unsigned, mis-signed and wrong-secret calls change nothing.
      const unsigned = await fetch(`${target.url}${path}`, { method: 'PUT', headers: { 'webpp-replica-version': `9999999999999@${first.url}`, 'webpp-logical-url': `${first.url}/doc.txt` }, body: 'evil' });
      expect(unsigned.status).toBe(401);
      const wrongSecret = await fetch(`${target.url}${path}`, {
        method: 'PUT',
        headers: {
          'webpp-replica-version': `9999999999999@${first.url}`,
          'webpp-logical-url': `${first.url}/doc.txt`,
          'webpp-cluster-auth': signClusterRequest('another-secret-another-secret', 'PUT', `${target.url}${path}`, new TextEncoder().encode('evil')),
        },
        body: 'evil',
      });
      expect(wrongSecret.status).toBe(403);
      const sync = await fetch(`${target.url}/.well-known/webpp/sync`, { method: 'POST', body: new Uint8Array([0, 0]) });
      expect(sync.status).toBe(401);
      expect(await (await fetch(`${target.url}/doc.txt`)).text()).toBe('v2');
    } finally {
      for (const server of servers) await server.close();
    }
  }, 60_000);
});

describe('clusters named *.localhost', () => {
  it('reach each other although the system resolver does not know *.localhost', async () => {
    const b = await startReplicaServer({ publicHost: 'b.localhost', adminToken: ADMIN_TOKEN, clusterSecret: CLUSTER_SECRET, injectScript: false });
    const a = await startReplicaServer({ publicHost: 'a.localhost', adminToken: ADMIN_TOKEN, clusterSecret: CLUSTER_SECRET, peers: [b.url], injectScript: false });
    try {
      expect(a.url).toMatch(/^http:\/\/a\.localhost:\d+$/);
      const created = await fetch(`http://127.0.0.1:${a.port}/.well-known/webpp/replicas/named.txt`, { method: 'POST', headers: auth, body: 'one' });
      expect(created.status).toBe(201);
      await waitFor('the directory entry on b', () => b.app.webpp.directory.lookup(`${a.url}/named.txt`)?.physicalUrls.join());
      // b also holds a replica; a's PUT reaches it at its b.localhost physical URL.
      await b.app.webpp.replicas.create('/named.txt', Buffer.from('one'), 'text/plain', { source: 'api' });
      b.app.webpp.directory.addReplica(`${a.url}/named.txt`, `${b.url}/named.txt`);
      await a.app.webpp.syncNow();
      await waitFor('b listed on a', () => a.app.webpp.directory.lookup(`${a.url}/named.txt`)?.physicalUrls.length === 2);
      const put = await fetch(`http://127.0.0.1:${a.port}/.well-known/webpp/replicas/named.txt`, { method: 'PUT', headers: auth, body: 'two' });
      expect(((await put.json()) as { pushes: { ok: boolean }[] }).pushes).toEqual([expect.objectContaining({ ok: true })]);
      expect(await (await fetch(`http://127.0.0.1:${b.port}/named.txt`)).text()).toBe('two');
    } finally {
      await a.close();
      await b.close();
    }
  }, 30_000);
});
