/**
 * The pushed-service-time exchange (POST /.well-known/webpp/peer/load/v1) against a signed
 * sender that misbehaves (a peer with a buggy clock, or a holder of the secret), with a real
 * server on loopback. Found by hand with three CLI servers:
 * - a message naming a server that is no peer of the receiver ("http://evil.localhost:1") is
 *   kept and forwarded to every browser in `webpp-load`; the other peer calls (peer state,
 *   cooperative cache) accept records only from configured peers;
 * - a message from a real peer whose `sentAtMs` lies far ahead (a clock that was wrong, then
 *   corrected) locks that peer out: every later, honest message is "not newer" and ignored,
 *   so its last value (here one day of service time) is forwarded until the receiver restarts.
 *
 * Owned by feiorigin (origin/src/push/*): marked `.fails` until fixed there; remove `.fails`
 * with the fix (e.g. PeerLoads.learn accepting only configured peers, and refusing a
 * sentAtMs further than maxClockSkewMs ahead of the receiver's clock).
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { LOAD_HEADER, parseLoadHeader } from '@webpp/core';
import { startReplicaServer, type ReplicaServer } from '../src/server.js';
import { signClusterRequest } from '../src/http/auth.js';
import { PEER_LOAD_PATH } from '../src/push/peer-load-message.js';
import { ADMIN_TOKEN, CLUSTER_SECRET, freePort, removeTempDirs, tempDir } from './helpers.js';

const servers: ReplicaServer[] = [];

afterAll(async () => {
  await Promise.all(servers.map((server) => server.close()));
  await removeTempDirs();
});

const PEER = 'http://peer.localhost:9999';

async function receiver(): Promise<{ url: string; send: (message: object) => Promise<number> }> {
  const root = await tempDir();
  await writeFile(join(root, 'a.png'), 'png');
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const server = await startReplicaServer({ root, port, adminToken: ADMIN_TOKEN, clusterSecret: CLUSTER_SECRET, peers: [PEER], injectScript: false });
  servers.push(server);
  const send = async (message: object): Promise<number> => {
    const body = new TextEncoder().encode(JSON.stringify(message));
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    headers['webpp-cluster-auth'] = signClusterRequest(CLUSTER_SECRET, 'POST', `${url}${PEER_LOAD_PATH}`, body, { headers });
    const response = await fetch(`${url}${PEER_LOAD_PATH}`, { method: 'POST', headers, body });
    await response.arrayBuffer();
    return response.status;
  };
  return { url, send };
}

async function forwarded(url: string): Promise<ReturnType<typeof parseLoadHeader>> {
  return parseLoadHeader((await fetch(`${url}/a.png`)).headers.get(LOAD_HEADER));
}

describe('pushed service times from a misbehaving signed sender', () => {
  it.fails('a server that is no peer is not forwarded to browsers', async () => {
    const { url, send } = await receiver();
    await send({ server: 'http://evil.localhost:1', serviceMs: 0, ageMs: 0, sentAtMs: Date.now() });
    await send({ server: PEER, serviceMs: 7, ageMs: 0, sentAtMs: Date.now() });
    const servers = (await forwarded(url)).map((load) => load.server);
    expect(servers).toContain(PEER);
    expect(servers).not.toContain('http://evil.localhost:1');
  });

  it.fails("a message from the far future does not lock out the peer's later messages", async () => {
    const { url, send } = await receiver();
    await send({ server: PEER, serviceMs: 86_400_000, ageMs: 0, sentAtMs: Date.now() + 365 * 86_400_000 });
    await send({ server: PEER, serviceMs: 7, ageMs: 0, sentAtMs: Date.now() });
    expect((await forwarded(url)).find((load) => load.server === PEER)?.serviceMs).toBe(7);
  });
});
