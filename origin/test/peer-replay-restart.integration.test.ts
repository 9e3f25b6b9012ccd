/**
 * A signed peer call captured on the wire and replayed after its receiver restarted (two real
 * servers, loopback ports, real HTTP). The cooperative cache's state-changing calls carry a
 * one-time nonce (cache/cluster/replay-guard.ts), but the nonces seen live in memory: a
 * restarted server knew none of them, so a fill captured before an invalidation was accepted
 * once more after the restart and the invalidated copy was served again from memory. Load
 * records are kept newest-first in memory too: a dead peer's captured record, replayed after
 * the restart, was taken (the peer alive and idle again: a co-op for the next placement).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startReplicaServer, type ReplicaServer, type ReplicaServerOptions } from '../src/server.js';
import { rankServers } from '../src/cache/cluster/rendezvous.js';
import { signClusterRequest } from '../src/http/auth.js';
import { encodeObject, OBJECT_CONTENT_TYPE, PEER_CACHE_OBJECT_PATH } from '../src/cache/cluster/peer-protocol.js';
import { newNonce } from '../src/cache/cluster/replay-guard.js';
import { ADMIN_TOKEN, CLUSTER_SECRET, auth, freePort, removeTempDirs, tempDir } from './helpers.js';

let urls: string[] = [];
const servers: (ReplicaServer | undefined)[] = [];
let optionsOf: (index: number) => Promise<ReplicaServerOptions>;

beforeAll(async () => {
  const ports = [await freePort(), await freePort()];
  urls = ports.map((port) => `http://127.0.0.1:${port}`);
  const dataDirs = [await tempDir(), await tempDir()];
  const roots = [await tempDir(), await tempDir()];
  optionsOf = async (index) => ({
    root: roots[index] as string,
    dataDir: dataDirs[index] as string,
    port: ports[index] as number,
    publicUrl: urls[index] as string,
    adminToken: ADMIN_TOKEN,
    clusterSecret: CLUSTER_SECRET,
    peers: urls.filter((_, other) => other !== index),
    peerTimeoutMs: 1000,
    injectScript: false,
    memoryCacheBytes: 1024 * 1024,
  });
  for (const index of [0, 1]) servers[index] = await startReplicaServer(await optionsOf(index));
});

afterAll(async () => {
  for (const server of servers) await server?.close();
  await removeTempDirs();
});

/** A fill of `path` for `to`, as `from` sends it: the exact bytes a capture on the wire would hold. */
function capturedFill(from: string, to: string, path: string, body: string): { url: string; headers: Record<string, string>; body: Buffer } {
  const envelope = encodeObject(
    { path, status: 200, headers: { 'content-type': 'text/plain' }, body: Buffer.from(body), expiresAtMs: Infinity, readAtMs: Date.now() },
    { reason: 'fill' },
  );
  const url = `${to}${PEER_CACHE_OBJECT_PATH}?path=${encodeURIComponent(path)}&from=${encodeURIComponent(from)}&n=${newNonce()}`;
  const headers = { 'content-type': OBJECT_CONTENT_TYPE };
  return { url, body: envelope, headers: { ...headers, 'webpp-cluster-auth': signClusterRequest(CLUSTER_SECRET, 'POST', url, envelope, { headers }) } };
}

describe('a captured peer call replayed after its receiver restarted', () => {
  it('is refused: an invalidated copy does not come back', async () => {
    const [a, b] = urls as [string, string];
    // A path whose home is b, so that b keeps a fill.
    const path = Array.from({ length: 200 }, (_, index) => `/promo-${index}`).find((candidate) => rankServers(candidate, urls)[0] === b) as string;
    const capture = capturedFill(a, b, path, 'old promo');
    const send = (): Promise<Response> => fetch(capture.url, { method: 'POST', headers: capture.headers, body: capture.body });

    expect((await send()).status).toBe(201);
    expect(await (await fetch(`${b}${path}`)).text()).toBe('old promo');
    // The operator invalidates it (through a): every copy goes.
    const invalidation = await fetch(`${a}/.well-known/webpp/cache${path}`, { method: 'DELETE', headers: auth });
    expect(invalidation.status).toBe(200);
    expect((await fetch(`${b}${path}`)).status).toBe(404);
    expect((await send()).status).toBe(403);

    // b restarts (same data folder, same port); the capture is replayed within the signature window.
    await servers[1]?.close();
    servers[1] = await startReplicaServer(await optionsOf(1));
    const replay = await send();
    expect(replay.status).toBe(403);
    expect((await replay.json()) as { code: string }).toMatchObject({ code: 'WEBPP_ERR_FORBIDDEN' });
    expect((await fetch(`${b}${path}`)).status).toBe(404);
  });
});

describe('a captured load record replayed after its receiver restarted', () => {
  it('is not taken: the receiver does not bring back the old record of a dead peer', async () => {
    const [a, b] = urls as [string, string];
    const serverB = servers[1] as ReplicaServer;
    // b's ping to a, as captured on the wire: b's record, signed for a.
    const url = `${a}/.well-known/webpp/peer/state/ping`;
    const headers = serverB.app.webpp.peerState?.outgoingHeaders() ?? {};
    const capture = { ...headers, 'webpp-cluster-auth': signClusterRequest(CLUSTER_SECRET, 'POST', url, new Uint8Array(0), { headers }) };
    // b dies; a restarts (it holds no record of b); the capture is replayed within the signature window.
    await serverB.close();
    servers[1] = undefined;
    await servers[0]?.close();
    servers[0] = await startReplicaServer(await optionsOf(0));
    const replay = await fetch(url, { method: 'POST', headers: capture });
    expect(replay.status).toBeLessThan(300);
    expect(servers[0].app.webpp.peerState?.record(b)).toBeUndefined();
  });
});
