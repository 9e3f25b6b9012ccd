/**
 * Pushed service times from a misbehaving signed sender (a peer with a buggy clock, or a holder
 * of the cluster secret), with a real server on loopback. Found by hand with three CLI servers
 * against the first exchange (its own POST route, since folded into the peer load record):
 * - a record naming a server that is no peer of the receiver must not be forwarded to browsers
 *   in `webpp-load`;
 * - a record from a real peer whose `atMs` lies far ahead (a clock that was wrong, then
 *   corrected) must not lock that peer out: were it kept, every later honest record would be
 *   "not newer" and its value (here one day of service time) forwarded until a restart.
 * The peer load record (sync/peer-state.ts) accepts only configured peers and refuses a record
 * more than maxClockSkewMs away from the receiver's clock.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { LOAD_HEADER, parseLoadHeader } from '@webpp/core';
import { startReplicaServer, type ReplicaServer } from '../src/server.js';
import { signClusterRequest } from '../src/http/auth.js';
import { PEER_STATE_HEADER, encodeLoadRecord } from '../src/sync/load-record.js';
import { PING_PATH } from '../src/sync/pinger.js';
import { ADMIN_TOKEN, CLUSTER_SECRET, freePort, removeTempDirs, tempDir } from './helpers.js';

const servers: ReplicaServer[] = [];

afterAll(async () => {
  await Promise.all(servers.map((server) => server.close()));
  await removeTempDirs();
});

const PEER = 'http://peer.localhost:9999';

async function receiver(): Promise<{ url: string; ping: (server: string, atMs: number, serviceMs: number) => Promise<number> }> {
  const root = await tempDir();
  await writeFile(join(root, 'a.png'), 'png');
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const server = await startReplicaServer({
    root,
    port,
    adminToken: ADMIN_TOKEN,
    clusterSecret: CLUSTER_SECRET,
    peers: [PEER],
    peerPingIntervalMs: 3_600_000,
    syncIntervalMs: 3_600_000,
    injectScript: false,
  });
  servers.push(server);
  const ping = async (from: string, atMs: number, serviceMs: number): Promise<number> => {
    const header = encodeLoadRecord({ server: from, atMs, requestsPerSecond: 0, bytesPerSecond: 0, utilisation: 0, hot: [], fields: { serviceMs, serviceAgeMs: 0 } });
    const headers: Record<string, string> = { [PEER_STATE_HEADER]: header };
    headers['webpp-cluster-auth'] = signClusterRequest(CLUSTER_SECRET, 'POST', `${url}${PING_PATH}`, new Uint8Array(0), { headers });
    const response = await fetch(`${url}${PING_PATH}`, { method: 'POST', headers });
    await response.arrayBuffer();
    return response.status;
  };
  return { url, ping };
}

async function forwarded(url: string): Promise<ReturnType<typeof parseLoadHeader>> {
  return parseLoadHeader((await fetch(`${url}/a.png`)).headers.get(LOAD_HEADER));
}

describe('pushed service times from a misbehaving signed sender', () => {
  it('a server that is no peer is not forwarded to browsers', async () => {
    const { url, ping } = await receiver();
    await ping('http://evil.localhost:1', Date.now(), 0);
    await ping(PEER, Date.now(), 7);
    const named = (await forwarded(url)).map((load) => load.server);
    expect(named).toContain(PEER);
    expect(named).not.toContain('http://evil.localhost:1');
  });

  it("a record from the far future does not lock out the peer's later records", async () => {
    const { url, ping } = await receiver();
    await ping(PEER, Date.now() + 365 * 86_400_000, 86_400_000);
    await ping(PEER, Date.now(), 7);
    expect((await forwarded(url)).find((load) => load.server === PEER)?.serviceMs).toBe(7);
  });
});
