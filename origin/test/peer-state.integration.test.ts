/**
 * Peer load records and liveness with three real servers on loopback: records ride on the
 * directory sync and the pinger, carry each server's hot resources and extra fields, and a
 * server that stops answering pings is declared down once (and up again when it returns).
 * The records are signed: unsigned or altered calls are refused, replays are not kept.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startReplicaServer, type ReplicaServer } from '../src/server.js';
import { signClusterRequest } from '../src/http/auth.js';
import { clusterRequest } from '../src/sync/cluster-client.js';
import { PEER_STATE_HEADER, decodeLoadRecord, encodeLoadRecord } from '../src/sync/load-record.js';
import { PING_PATH } from '../src/sync/pinger.js';
import { ADMIN_TOKEN, CLUSTER_SECRET, freePort, removeTempDirs, tempDir, waitFor } from './helpers.js';

const NAMES = ['a', 'b', 'c'] as const;
type Name = (typeof NAMES)[number];
const PING_INTERVAL_MS = 100;

const ports = {} as Record<Name, number>;
const urls = {} as Record<Name, string>;
const servers = {} as Record<Name, ReplicaServer | undefined>;
let root: string;

async function start(name: Name): Promise<ReplicaServer> {
  const server = await startReplicaServer({
    root,
    host: '127.0.0.1',
    port: ports[name],
    publicUrl: urls[name],
    logicalOrigin: urls.a,
    adminToken: ADMIN_TOKEN,
    clusterSecret: CLUSTER_SECRET,
    peers: NAMES.filter((other) => other !== name).map((other) => urls[other]),
    // A long sync period: the pinger has to keep the records fresh.
    syncIntervalMs: 60_000,
    peerTimeoutMs: 1000,
    peerPingIntervalMs: PING_INTERVAL_MS,
    peerMissedPingsForDown: 3,
    injectScript: false,
  });
  servers[name] = server;
  return server;
}

beforeAll(async () => {
  root = await tempDir('webpp-peer-state-site-');
  const { writeFile } = await import('node:fs/promises');
  await writeFile(`${root}/hot.js`, 'console.log("hot");\n'.repeat(50));
  await writeFile(`${root}/cold.css`, 'body{}\n');
  for (const name of NAMES) {
    ports[name] = await freePort();
    urls[name] = `http://${name}.localhost:${ports[name]}`;
  }
  for (const name of NAMES) await start(name);
}, 30_000);

afterAll(async () => {
  for (const name of NAMES) await servers[name]?.close();
  await removeTempDirs();
});

function server(name: Name): ReplicaServer {
  const found = servers[name];
  if (found === undefined) throw new Error(`${name} is not running`);
  return found;
}

describe('peer load records', () => {
  it('reach every peer with the sender hot resources and extra fields', async () => {
    const a = server('a');
    a.app.webpp.peerState?.registerField('example.figure', () => 42.5);
    for (let i = 0; i < 30; i += 1) {
      const response = await fetch(`http://127.0.0.1:${ports.a}/hot.js`);
      await response.arrayBuffer();
    }
    await (await fetch(`http://127.0.0.1:${ports.a}/cold.css`)).arrayBuffer();
    for (const name of ['b', 'c'] as const) {
      const held = await waitFor(`${name} to hold a's record with 30 hits on /hot.js`, () => {
        const record = server(name).app.webpp.peerState?.record(urls.a);
        return record !== undefined && record.record.hot[0]?.path === '/hot.js' && record.record.hot[0].hits === 30 ? record : undefined;
      });
      expect(held.record.server).toBe(urls.a);
      expect(held.record.hot.map((row) => row.path)).toEqual(['/hot.js', '/cold.css']);
      expect(held.record.hot[0]?.sizeBytes).toBe('console.log("hot");\n'.length * 50);
      expect(held.record.requestsPerSecond).toBeGreaterThan(0);
      expect(held.record.fields['example.figure']).toBe(42.5);
      // The server push adds its own field (push/peer-loads.ts): a's pushed service time.
      expect(held.record.fields.serviceMs).toBeTypeOf('number');
      expect(server(name).app.webpp.peerState?.livePeers()).toEqual(NAMES.filter((other) => other !== name).map((other) => urls[other]));
    }
  });

  it('declares a server that stops answering down once, and up again when it is back', async () => {
    const a = server('a').app.webpp.peerState;
    if (a === undefined) throw new Error('no peer state');
    const downs: string[] = [];
    const ups: string[] = [];
    a.onPeerDown((peer) => downs.push(peer));
    a.onPeerUp((peer) => ups.push(peer));
    await server('c').close();
    servers.c = undefined;
    await waitFor('a to declare c down', () => !a.isLive(urls.c), { timeoutMs: 10_000 });
    expect(a.livePeers()).toEqual([urls.b]);
    // More missed pings do not announce it again.
    await new Promise((resolve) => setTimeout(resolve, 5 * PING_INTERVAL_MS));
    expect(downs).toEqual([urls.c]);
    await start('c');
    await waitFor('a to hear from c again', () => a.isLive(urls.c), { timeoutMs: 10_000 });
    expect(ups).toEqual([urls.c]);
    expect(a.livePeers()).toEqual([urls.b, urls.c]);
  }, 30_000);
});

describe('peer load records are signed', () => {
  const record = (atMs: number, requestsPerSecond = 999) =>
    encodeLoadRecord({ server: urls.b, atMs, requestsPerSecond, bytesPerSecond: 1, utilisation: 0.5, hot: [], fields: {} });

  it('refuses an unsigned ping and one whose record was altered after signing', async () => {
    const unsigned = await fetch(`http://127.0.0.1:${ports.a}${PING_PATH}`, { method: 'POST', headers: { [PEER_STATE_HEADER]: record(Date.now()) } });
    expect(unsigned.status).toBe(401);
    const signedFor = { [PEER_STATE_HEADER]: record(Date.now()) };
    const signature = signClusterRequest(CLUSTER_SECRET, 'POST', urls.a + PING_PATH, new Uint8Array(0), { headers: signedFor });
    const altered = await fetch(`http://127.0.0.1:${ports.a}${PING_PATH}`, {
      method: 'POST',
      headers: { 'webpp-cluster-auth': signature, [PEER_STATE_HEADER]: record(Date.now() + 1) },
    });
    expect(altered.status).toBe(403);
    expect(server('a').app.webpp.peerState?.record(urls.b)?.record.requestsPerSecond).not.toBe(999);
  });

  it('keeps a signed record, answers with its own, and ignores a replay of an older one', async () => {
    const a = server('a').app.webpp.peerState;
    if (a === undefined) throw new Error('no peer state');
    // Newer than anything b sends for a minute (within the accepted clock skew).
    const atMs = Date.now() + 60_000;
    const response = await clusterRequest(CLUSTER_SECRET, urls.a + PING_PATH, { method: 'POST', headers: { [PEER_STATE_HEADER]: record(atMs) }, timeoutMs: 2000 });
    expect(response.status).toBe(204);
    expect(decodeLoadRecord(response.headers[PEER_STATE_HEADER])?.server).toBe(urls.a);
    expect(a.record(urls.b)?.record.requestsPerSecond).toBe(999);
    // A validly signed call carrying an older record (a replay of b's earlier one) changes nothing.
    // Older than b's own records too: a's pinger may meanwhile hold b's genuine record (an
    // answer to a's own ping replaces the held one, see PeerState.receive), and the replay must
    // lose against either.
    const replayAtMs = Date.now() - 500;
    const replay = await clusterRequest(CLUSTER_SECRET, urls.a + PING_PATH, { method: 'POST', headers: { [PEER_STATE_HEADER]: record(replayAtMs, 1) }, timeoutMs: 2000 });
    expect(replay.status).toBe(204);
    expect(a.record(urls.b)?.record.atMs).toBeGreaterThan(replayAtMs);
  });
});
