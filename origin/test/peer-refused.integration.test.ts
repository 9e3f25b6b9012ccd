/**
 * A peer that refuses this server's signed calls (two real servers on loopback: the second
 * restarted with another cluster secret, as after a rotation done on one server only; a
 * clock further off than maxClockSkewMs has the same effect). It answers every ping with
 * 403, so it can neither sync, nor take pushes, nor serve lazy fetches. It counted as alive
 * ("any HTTP answer"), so its automatic replicas were never recalled and nothing but a
 * debug line said anything was wrong. Refused pings are now misses: after
 * peerMissedPingsForDown of them the peer is down (its automatic replicas recalled), with a
 * warning; up again once it accepts a ping.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startReplicaServer, type ReplicaServer, type ReplicaServerOptions } from '../src/server.js';
import { ADMIN_TOKEN, CLUSTER_SECRET, auth, freePort, removeTempDirs, tempDir, waitFor } from './helpers.js';

let urls: string[] = [];
const servers: (ReplicaServer | undefined)[] = [];
let optionsOf: (index: number, secret: string) => Promise<ReplicaServerOptions>;

beforeAll(async () => {
  const ports = [await freePort(), await freePort()];
  urls = ports.map((port) => `http://127.0.0.1:${port}`);
  const dataDirs = [await tempDir(), await tempDir()];
  optionsOf = async (index, secret) => ({
    root: await tempDir(),
    dataDir: dataDirs[index] as string,
    port: ports[index] as number,
    publicUrl: urls[index] as string,
    adminToken: ADMIN_TOKEN,
    clusterSecret: secret,
    peers: urls.filter((_, other) => other !== index),
    syncIntervalMs: 60_000,
    peerTimeoutMs: 1000,
    peerPingIntervalMs: 100,
    peerMissedPingsForDown: 3,
    injectScript: false,
  });
  for (const index of [0, 1]) servers[index] = await startReplicaServer(await optionsOf(index, CLUSTER_SECRET));
});

afterAll(async () => {
  for (const server of servers) await server?.close();
  await removeTempDirs();
});

const peerUp = async (peer: string): Promise<string | undefined> => {
  const metrics = await (await fetch(`${urls[0]}/.well-known/webpp/metrics`, { headers: auth })).text();
  return /webpp_peer_up\{peer="([^"]+)"\} ([01])/.exec(metrics.split('\n').find((line) => line.includes(`peer="${peer}"`) && line.startsWith('webpp_peer_up')) ?? '')?.[2];
};

describe('a peer that refuses this server’s signature', () => {
  it('is down after the missed pings, and up again once it accepts them', async () => {
    const [, b] = urls as [string, string];
    expect(await peerUp(b)).toBe('1');
    await servers[1]?.close();
    servers[1] = await startReplicaServer(await optionsOf(1, 'another-cluster-secret-0123456789'));
    // Down while it restarted (connections refused), and it stays down while it answers 403.
    await new Promise((resolve) => setTimeout(resolve, 1000));
    for (let sample = 0; sample < 10; sample += 1) {
      expect(await peerUp(b)).toBe('0');
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    await servers[1]?.close();
    servers[1] = await startReplicaServer(await optionsOf(1, CLUSTER_SECRET));
    await waitFor('a to count b up again', async () => (await peerUp(b)) === '1', { timeoutMs: 5000 });
  });
});
