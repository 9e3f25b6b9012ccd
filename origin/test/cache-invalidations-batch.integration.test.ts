/**
 * `POST /.well-known/webpp/cache-invalidations` while a peer hangs (a partitioned server that
 * accepts connections and never answers), with a real server on loopback. Found by hand with
 * three CLI servers, one stopped with SIGSTOP: a call with 3 paths and 1 prefix took 20 s,
 * one `peerTimeoutMs` (5 s) per path, one after the other, so the documented 1000 paths would
 * have taken 83 minutes. The targets of one call are invalidated together: the call waits
 * for the hung peer once.
 */
import { createServer, type Server, type Socket } from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import { startReplicaServer, type ReplicaServer } from '../src/server.js';
import { ADMIN_TOKEN, CLUSTER_SECRET, auth, freePort, removeTempDirs, tempDir } from './helpers.js';

const servers: ReplicaServer[] = [];
const hung: Socket[] = [];
let hungPeer: Server | undefined;

afterAll(async () => {
  for (const socket of hung) socket.destroy();
  hungPeer?.close();
  await Promise.all(servers.map((server) => server.close()));
  await removeTempDirs();
});

const PEER_TIMEOUT_MS = 1000;

describe('a batch of cache invalidations while a peer hangs', () => {
  it('waits for the hung peer once, not once per path', async () => {
    const hungPort = await freePort();
    hungPeer = createServer((socket) => void hung.push(socket)); // accepts, never answers
    await new Promise<void>((resolve) => hungPeer?.listen(hungPort, '127.0.0.1', resolve));
    const server = await startReplicaServer({
      root: await tempDir(),
      adminToken: ADMIN_TOKEN,
      clusterSecret: CLUSTER_SECRET,
      peers: [`http://127.0.0.1:${hungPort}`],
      peerTimeoutMs: PEER_TIMEOUT_MS,
      memoryCacheBytes: 1_000_000,
      injectScript: false,
    });
    servers.push(server);
    const paths = Array.from({ length: 8 }, (_, index) => `/page-${index}`);
    for (const path of paths) {
      const put = await fetch(`${server.url}/.well-known/webpp/cache${path}`, { method: 'PUT', headers: { ...auth, 'content-type': 'text/plain' }, body: `old ${path}` });
      expect(put.status).toBe(200);
    }

    const startedMs = Date.now();
    const response = await fetch(`${server.url}/.well-known/webpp/cache-invalidations`, {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json' },
      body: JSON.stringify({ paths, prefixes: ['/news/', '/blog/'] }),
    });
    const elapsedMs = Date.now() - startedMs;
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ invalidated: paths.length });
    // Sequentially it took 10 × PEER_TIMEOUT_MS; together it takes about one.
    expect(elapsedMs).toBeLessThan(4 * PEER_TIMEOUT_MS);
    for (const path of paths) expect((await fetch(`${server.url}${path}`)).status).toBe(404);
  });

  it('refuses the whole batch, and removes nothing, when one target is malformed', async () => {
    const server = await startReplicaServer({ root: await tempDir(), adminToken: ADMIN_TOKEN, memoryCacheBytes: 1_000_000, injectScript: false });
    servers.push(server);
    await fetch(`${server.url}/.well-known/webpp/cache/kept`, { method: 'PUT', headers: { ...auth, 'content-type': 'text/plain' }, body: 'kept' });
    const response = await fetch(`${server.url}/.well-known/webpp/cache-invalidations`, {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json' },
      body: JSON.stringify({ paths: ['/kept', 'no-slash'] }),
    });
    expect(response.status).toBe(400);
    expect(((await response.json()) as { code: string }).code).toBe('WEBPP_ERR_BAD_PATH');
    expect(await (await fetch(`${server.url}/kept`)).text()).toBe('kept');
  });
});
