/**
 * How the memory cache handles misses, over real loopback HTTP (issue 15, session 4):
 * - concurrent misses for one object reach the upstream (or the app's route) once;
 * - an expired proxy entry is revalidated with a conditional request, and the upstream's
 *   304 is answered with the body from memory;
 * - in a cluster of three, a hot object fetched from a peer is kept, so the next request is
 *   a local hit, while a cold one is left to its home (the warm tail pays the hop).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import Fastify, { type FastifyInstance } from 'fastify';
import { startReplicaServer, type ReplicaServer } from '../src/server.js';
import { rankServers } from '../src/cache/cluster/rendezvous.js';
import { ADMIN_TOKEN, CLUSTER_SECRET, freePort, removeTempDirs, tempDir, waitFor } from './helpers.js';
import { WEBPP_INTERNALS } from '../src/options/internals.js';

const CACHE_BYTES = 4 * 1024 * 1024;

afterAll(removeTempDirs);

describe('proxy mode', () => {
  let upstream: FastifyInstance;
  let proxy: ReplicaServer;
  /** Per path: full answers (200) and 304s the upstream sent, and the conditional headers it saw. */
  const seen = { full: new Map<string, number>(), notModified: 0, conditionals: [] as string[] };
  /** The slow page's answers wait for this. */
  let release: () => void = () => undefined;
  let released = new Promise<void>((resolve) => (release = resolve));

  beforeAll(async () => {
    upstream = Fastify();
    const count = (path: string): void => void seen.full.set(path, (seen.full.get(path) ?? 0) + 1);
    upstream.get('/slow', async (_request, reply) => {
      count('/slow');
      await released;
      return reply.header('cache-control', 'public, max-age=60').type('text/plain').send('rendered once');
    });
    upstream.get('/short', async (request, reply) => {
      const condition = request.headers['if-none-match'];
      if (condition !== undefined) seen.conditionals.push(condition);
      reply.header('cache-control', 'public, max-age=1').header('etag', '"short-v1"');
      if (condition === '"short-v1"') {
        seen.notModified += 1;
        return reply.code(304).send();
      }
      count('/short');
      return reply.type('text/plain').send('short-lived body');
    });
    await upstream.listen({ port: 0, host: '127.0.0.1' });
    const address = upstream.server.address();
    const port = typeof address === 'object' && address !== null ? address.port : 0;
    proxy = await startReplicaServer({ proxyUpstream: `http://127.0.0.1:${port}`, adminToken: ADMIN_TOKEN, memoryCacheBytes: CACHE_BYTES });
  });

  afterAll(async () => {
    release();
    await proxy?.close();
    await upstream?.close();
  });

  it('sends concurrent misses for one object to the upstream once, and answers them all', async () => {
    const clients = 8;
    const answers = Array.from({ length: clients }, () => fetch(`${proxy.url}/slow`).then(async (response) => ({ status: response.status, body: await response.text() })));
    await waitFor('the upstream has the first request', () => (seen.full.get('/slow') ?? 0) >= 1, { timeoutMs: 5000 });
    // Time for every client's request to reach the proxy before the upstream answers.
    await new Promise((resolve) => setTimeout(resolve, 300));
    release();
    const results = await Promise.all(answers);
    expect(results).toEqual(Array.from({ length: clients }, () => ({ status: 200, body: 'rendered once' })));
    expect(seen.full.get('/slow')).toBe(1);
    expect(proxy.app.webpp.cache.summary().coalesced).toBe(clients - 1);
    released = new Promise<void>((resolve) => (release = resolve));
  });

  it('revalidates an expired entry with a conditional request, and answers the 304 with the body from memory', async () => {
    const first = await fetch(`${proxy.url}/short`);
    expect(await first.text()).toBe('short-lived body');
    expect(seen.full.get('/short')).toBe(1);
    await waitFor('the entry expired', () => proxy.app.webpp.cache.query('/short') === undefined, { timeoutMs: 5000, intervalMs: 100 });
    const revalidated = await fetch(`${proxy.url}/short`);
    expect(revalidated.status).toBe(200);
    expect(await revalidated.text()).toBe('short-lived body');
    expect(revalidated.headers.get('etag')).toBe('"short-v1"');
    expect(revalidated.headers.get('server-timing')).toMatch(/webpp;dur=/); // set by the plugins before the cache: kept
    expect(seen.conditionals).toEqual(['"short-v1"']);
    expect(seen.notModified).toBe(1);
    expect(seen.full.get('/short')).toBe(1); // the body was not fetched again
    expect(proxy.app.webpp.cache.summary().revalidations).toBe(1);
    // Fresh again for the upstream's lifetime: the next request is a local hit.
    const hitsBefore = proxy.app.webpp.cache.summary().localHits;
    expect(await (await fetch(`${proxy.url}/short`)).text()).toBe('short-lived body');
    expect(proxy.app.webpp.cache.summary().localHits).toBe(hitsBefore + 1);
    // A client's own conditional request with the current validator still gets its 304.
    const conditional = await fetch(`${proxy.url}/short`, { headers: { 'if-none-match': '"short-v1"' } });
    expect(conditional.status).toBe(304);
  });
});

describe('an app route', () => {
  it('renders once for concurrent misses', async () => {
    let renders = 0;
    let finish: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => (finish = resolve));
    const server = await startReplicaServer({
      root: await tempDir(),
      adminToken: ADMIN_TOKEN,
      memoryCacheBytes: CACHE_BYTES,
      routes: (app) => {
        app.get('/report', { config: { webppCache: { ttlMs: 60_000 } } }, async (_request, reply) => {
          renders += 1;
          await gate;
          return reply.type('text/plain').send('the report');
        });
      },
    });
    try {
      const answers = Array.from({ length: 5 }, () => fetch(`${server.url}/report`).then((response) => response.text()));
      await waitFor('the route runs', () => renders >= 1, { timeoutMs: 5000 });
      await new Promise((resolve) => setTimeout(resolve, 300));
      finish();
      expect(await Promise.all(answers)).toEqual(Array.from({ length: 5 }, () => 'the report'));
      expect(renders).toBe(1);
    } finally {
      finish();
      await server.close();
    }
  });
});

describe('hot objects in a cluster of three (default memoryCacheHotShare)', () => {
  const servers: ReplicaServer[] = [];
  const roots: string[] = [];
  const urls: string[] = [];

  beforeAll(async () => {
    for (let index = 0; index < 3; index += 1) {
      urls.push(`http://127.0.0.1:${await freePort()}`);
      roots.push(await tempDir());
    }
    for (const [index, url] of urls.entries()) {
      servers.push(
        await startReplicaServer({
          root: roots[index],
          port: Number(new URL(url).port),
          publicUrl: url,
          logicalOrigin: urls[0],
          adminToken: ADMIN_TOKEN,
          clusterSecret: CLUSTER_SECRET,
          peers: urls.filter((other) => other !== url),
          peerTimeoutMs: 1000,
          injectScript: false,
          memoryCacheBytes: CACHE_BYTES,
          [WEBPP_INTERNALS]: { memoryCacheReportIntervalMs: 100 },
        }),
      );
    }
  });

  afterAll(async () => {
    for (const server of servers) await server.close();
  });

  it('keeps a hot object fetched from a peer, so the next request is local; cold ones stay with their home', async () => {
    const [asker, home] = servers as [ReplicaServer, ReplicaServer, ReplicaServer];
    const homedAtB = Array.from({ length: 400 }, (_, index) => `/h${index}.html`).filter((path) => rankServers(path, urls)[0] === urls[1]);
    const [hot, ...cold] = homedAtB.slice(0, 21) as [string, ...string[]];
    for (const path of [hot, ...cold]) for (const root of roots) await writeFile(join(root, path), `page ${path}`);
    // Twenty pages asked for once, at the asker: each read from its disk and sent to its home, not kept.
    for (const path of cold) expect(await (await fetch(`${asker.url}${path}`)).text()).toBe(`page ${path}`);
    for (const path of cold) expect(asker.app.webpp.cache.query(path)).toBeUndefined();
    // One page asked for four times at its home: in the top share of the counts.
    for (let index = 0; index < 4; index += 1) expect(await (await fetch(`${home.url}${hot}`)).text()).toBe(`page ${hot}`);
    const peerHitsBefore = asker.app.webpp.cache.summary().peerHits;
    expect(await (await fetch(`${asker.url}${hot}`)).text()).toBe(`page ${hot}`);
    expect(asker.app.webpp.cache.summary().peerHits).toBe(peerHitsBefore + 1);
    expect(asker.app.webpp.cache.query(hot)).toBeDefined();
    const localHitsBefore = asker.app.webpp.cache.summary().localHits;
    expect(await (await fetch(`${asker.url}${hot}`)).text()).toBe(`page ${hot}`);
    expect(asker.app.webpp.cache.summary().localHits).toBe(localHitsBefore + 1);
  });
});
