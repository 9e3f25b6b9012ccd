/**
 * An invalidation that reaches a server late (two real servers on loopback, signed peer
 * calls): the peer was frozen (SIGSTOP) or cut off when it was issued, so it gets it from the
 * retry, after the operator already put the new content ("invalidate, then put",
 * docs/origin.md). The server dated the invalidation by its arrival, so it refused every copy
 * read before that — the new content too — and answered 404 for the path while the home held
 * it (for `maxClockSkewMs` at least; then, since copies older than the log's memory were
 * refused outright, for good).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startReplicaServer, type ReplicaServer } from '../src/server.js';
import { rankServers } from '../src/cache/cluster/rendezvous.js';
import { clusterRequest } from '../src/sync/cluster-client.js';
import { newNonce } from '../src/cache/cluster/replay-guard.js';
import { ADMIN_TOKEN, CLUSTER_SECRET, auth, freePort, removeTempDirs, tempDir } from './helpers.js';

const PEER_TIMEOUT_MS = 1000;
let urls: string[] = [];
const servers: ReplicaServer[] = [];

beforeAll(async () => {
  const ports = [await freePort(), await freePort()];
  urls = ports.map((port) => `http://127.0.0.1:${port}`);
  for (const [index, port] of ports.entries()) {
    servers.push(
      await startReplicaServer({
        root: await tempDir(),
        port,
        publicUrl: urls[index] as string,
        adminToken: ADMIN_TOKEN,
        clusterSecret: CLUSTER_SECRET,
        peers: urls.filter((_, other) => other !== index),
        peerTimeoutMs: PEER_TIMEOUT_MS,
        injectScript: false,
        memoryCacheBytes: 1024 * 1024,
      }),
    );
  }
});

afterAll(async () => {
  for (const server of servers) await server.close();
  await removeTempDirs();
});

describe('an invalidation that arrives late', () => {
  it('does not refuse the content put after it was issued', async () => {
    const [a, home] = urls as [string, string];
    const path = Array.from({ length: 200 }, (_, index) => `/promo-${index}`).find((candidate) => rankServers(candidate, urls)[0] === home) as string;
    // The operator invalidates the path (issued now; a is frozen and gets it later), then puts the new content.
    const issuedAtMs = Date.now();
    await new Promise((resolve) => setTimeout(resolve, 20));
    const put = await fetch(`${home}/.well-known/webpp/cache${path}`, { method: 'PUT', headers: { ...auth, 'content-type': 'text/plain' }, body: 'new promo' });
    expect(put.status).toBe(200);
    expect(await (await fetch(`${a}${path}`)).text()).toBe('new promo');
    // a wakes up: the invalidation, retried, arrives.
    const url = `${a}/.well-known/webpp/peer/cache/invalidate?from=${encodeURIComponent(home)}&n=${newNonce()}`;
    const late = await clusterRequest(CLUSTER_SECRET, url, {
      method: 'POST',
      body: Buffer.from(JSON.stringify({ paths: [path], prefixes: [], atMs: issuedAtMs })),
      headers: { 'content-type': 'application/json' },
      timeoutMs: 2000,
    });
    expect(late.status).toBe(200);
    // Once no copy read before its arrival can still be in flight, a takes the home's new copy again.
    await new Promise((resolve) => setTimeout(resolve, PEER_TIMEOUT_MS + 100));
    const after = await fetch(`${a}${path}`);
    expect(after.status).toBe(200);
    expect(await after.text()).toBe('new promo');
  });
});
