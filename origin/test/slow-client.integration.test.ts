/**
 * Slow clients against the concurrency limit (maxConcurrentRequests), with real servers on
 * loopback. Found by hand: with `--max-concurrent-requests 4`, four clients that asked for a
 * large file and read it one byte a second kept all four slots for as long as they liked,
 * and every other request for content waited in the queue behind them (a slowloris on the
 * response side). A slot measures the server's work, not the client's reading speed.
 */
import { writeFile } from 'node:fs/promises';
import { connect, type Socket } from 'node:net';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { startReplicaServer, type ReplicaServer } from '../src/server.js';
import { ADMIN_TOKEN, auth, removeTempDirs, tempDir, waitFor } from './helpers.js';

const servers: ReplicaServer[] = [];
const sockets: Socket[] = [];

afterAll(async () => {
  for (const socket of sockets) socket.destroy();
  await Promise.all(servers.map((server) => server.close()));
  await removeTempDirs();
});

/** Larger than what loopback socket buffers absorb, so its response cannot finish unread. */
const LARGE_FILE_BYTES = 48 * 1024 * 1024;

async function siteWithLargeFile(): Promise<string> {
  const root = await tempDir();
  await writeFile(join(root, 'large.bin'), Buffer.alloc(LARGE_FILE_BYTES, 7));
  await writeFile(join(root, 'small.txt'), 'small');
  return root;
}

/** A client that asks for `path` and then reads nothing; resolves once the response head arrived. */
function nonReadingClient(port: number, path: string): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => socket.write(`GET ${path} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n\r\n`));
    sockets.push(socket);
    socket.once('error', reject);
    socket.once('data', () => {
      socket.pause(); // from here on, the kernel buffers fill and the server waits on the client
      resolve(socket);
    });
  });
}

describe('a client that reads slowly', () => {
  it('does not keep a slot of maxConcurrentRequests: other requests are served meanwhile', async () => {
    const server = await startReplicaServer({ root: await siteWithLargeFile(), adminToken: ADMIN_TOKEN, injectScript: false, maxConcurrentRequests: 2, maxQueuedRequests: 10 });
    servers.push(server);
    const port = Number(new URL(server.url).port);
    await Promise.all([nonReadingClient(port, '/large.bin'), nonReadingClient(port, '/large.bin')]);

    const response = await fetch(`${server.url}/small.txt`, { signal: AbortSignal.timeout(10_000) });
    expect(response.status).toBe(200);
    expect(await response.text()).toBe('small');
    const stats = (await (await fetch(`${server.url}/.well-known/webpp/stats`, { headers: auth })).json()) as { origin: { push: { concurrency: { active: number; queued: number } } } };
    expect(stats.origin.push.concurrency.queued).toBe(0);

    // The slots still bound the work: with both slow readers gone, nothing is held.
    for (const socket of sockets.splice(0)) socket.destroy();
    await waitFor('the slots to be free', async () => {
      const after = (await (await fetch(`${server.url}/.well-known/webpp/stats`, { headers: auth })).json()) as { origin: { push: { concurrency: { active: number } } } };
      return after.origin.push.concurrency.active === 0;
    });
  });
});
