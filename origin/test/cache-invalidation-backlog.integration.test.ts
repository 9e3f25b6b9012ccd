/**
 * Invalidations owed to a peer that did not answer (docs/origin.md, "Cooperative cache":
 * "sent the invalidation again every memoryCacheReportIntervalMs until it acknowledges"),
 * with two real servers on loopback, the second one reached through a link that we cut and
 * restore. ClusterInvalidation kept at most the last 1000 invalidations owed to a peer
 * (`.slice(-1000)`): beyond that the oldest were dropped (here 1001 targets: one dropped),
 * and when the peer was back it kept serving those paths' old copies (copies put without a
 * lifetime: for ever). One HTTP call may carry 1000 paths and 1000 prefixes, so a single
 * call while a peer is cut off was enough. Now the debt collapses into the prefix "/".
 */
import { createServer, connect, type Server, type Socket } from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import { startReplicaServer, type ReplicaServer } from '../src/server.js';
import { ADMIN_TOKEN, CLUSTER_SECRET, auth, freePort, removeTempDirs, tempDir, waitFor } from './helpers.js';
import { WEBPP_INTERNALS } from '../src/options/internals.js';

const servers: ReplicaServer[] = [];
const sockets: Socket[] = [];
let link: Server | undefined;

afterAll(async () => {
  for (const socket of sockets) socket.destroy();
  link?.close();
  await Promise.all(servers.map((server) => server.close()));
  await removeTempDirs();
});

/** A TCP link to `targetPort` that, while cut, accepts connections and never answers (a partition). */
async function cuttableLink(port: number, targetPort: number): Promise<{ cut: (on: boolean) => void }> {
  let isCut = false;
  link = createServer((socket) => {
    sockets.push(socket);
    if (isCut) return;
    const upstream = connect(targetPort, '127.0.0.1');
    sockets.push(upstream);
    socket.pipe(upstream).pipe(socket);
    socket.on('error', () => upstream.destroy());
    upstream.on('error', () => socket.destroy());
  });
  await new Promise<void>((resolve) => link?.listen(port, '127.0.0.1', resolve));
  return {
    cut: (on) => {
      isCut = on;
      // Kept-alive connections made before the cut are cut too.
      if (on) for (const socket of sockets.splice(0)) socket.destroy();
    },
  };
}

const PATHS = Array.from({ length: 1000 }, (_, index) => `/s${index}`);
const PREFIXES = ['/t/'];
/** b holds a copy for every target, so whichever one is dropped, a copy stays. */
const COPIES = [...PATHS, '/t/x'];

describe('invalidations owed to a peer that was cut off', () => {
  it('all reach it when it is back: none of its old copies is served', async () => {
    const [portA, portB, linkPort] = [await freePort(), await freePort(), await freePort()];
    const urlA = `http://127.0.0.1:${portA}`;
    const urlB = `http://127.0.0.1:${linkPort}`; // b as a reaches it: through the link
    const common = { adminToken: ADMIN_TOKEN, clusterSecret: CLUSTER_SECRET, memoryCacheBytes: 64_000_000, [WEBPP_INTERNALS]: { memoryCacheReportIntervalMs: 200 }, peerTimeoutMs: 1000, injectScript: false };
    const { cut } = await cuttableLink(linkPort, portB);
    servers.push(await startReplicaServer({ ...common, root: await tempDir(), port: portA, publicUrl: urlA, peers: [urlB] }));
    servers.push(await startReplicaServer({ ...common, root: await tempDir(), port: portB, publicUrl: urlB, peers: [urlA] }));
    const direct = `http://127.0.0.1:${portB}`;
    for (let start = 0; start < COPIES.length; start += 50) {
      const statuses = await Promise.all(COPIES.slice(start, start + 50).map(async (path) => {
        const put = await fetch(`${direct}/.well-known/webpp/cache${path}`, { method: 'PUT', headers: { ...auth, 'content-type': 'text/plain' }, body: `old ${path}` });
        return put.status;
      }));
      expect(statuses.every((status) => status === 200)).toBe(true);
    }

    cut(true);
    const response = await fetch(`${urlA}/.well-known/webpp/cache-invalidations`, {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json' },
      body: JSON.stringify({ paths: PATHS, prefixes: PREFIXES }),
    });
    expect(response.status).toBe(200);
    cut(false);
    // a retries what it owes b every report beat (200 ms) until b acknowledges: within a
    // few seconds none of b's old copies is served.
    await waitFor('every old copy on b to be gone', async () => {
      const summary = (await (await fetch(`${direct}/.well-known/webpp/cache`, { headers: auth })).json()) as { entries: number };
      return summary.entries === 0;
    }, { timeoutMs: 10_000, intervalMs: 250 });
  }, 60_000);
});
