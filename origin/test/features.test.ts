/**
 * The opt-in features as plugins of their own (issue 24): each, registered by the app from its
 * entry point after webppOrigin (`@webpp/origin/batch`, `/memory-cache`, `/client-aggregate`,
 * `/replication`), does what its option does: batches, cache hits, the aggregate header and
 * the report endpoint, automatic placements (with the co-op's lazy copy), on real HTTP; and it
 * shows in `app.webpp.options` and in the limits that follow its options. Their hooks' order
 * is response-path.test.ts's.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import Fastify, { type FastifyInstance } from 'fastify';
import fastifyStatic from '@fastify/static';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { AGGREGATE_HEADER, BATCH_ACCEPT, BATCH_MEDIA_TYPE, CLIENT_REPORT_PATH } from '@webpp/core';
import { webppOrigin } from '../src/plugin.js';
import type { WebppOriginOptions } from '../src/options.js';
import { WEBPP_INTERNALS } from '../src/options/internals.js';
import { webppBatch } from '../src/features/batch.js';
import { webppMemoryCache } from '../src/features/memory-cache.js';
import { webppClientAggregate } from '../src/features/client-aggregate.js';
import { webppReplication } from '../src/features/replication.js';
import { CACHE_INVALIDATIONS_PATH, CACHE_PREFIX } from '../src/routes/cache.js';
import { METRICS_PATH } from '../src/routes/public.js';
import { ADMIN_TOKEN, CLUSTER_SECRET, auth, freePort, removeTempDirs, tempDir, waitFor } from './helpers.js';

const apps: FastifyInstance[] = [];
afterEach(async () => {
  await Promise.all(apps.splice(0).map((app) => app.close()));
});
afterAll(removeTempDirs);

/**
 * webppOrigin (with `options`), then `feature` as the app registers it, then a static site
 * (`empty`: a folder without files); listening on 127.0.0.1.
 */
async function startWith(
  feature: (app: FastifyInstance) => PromiseLike<unknown>,
  { port, options = {}, empty = false }: { port?: number; options?: Partial<WebppOriginOptions>; empty?: boolean } = {},
): Promise<{ app: FastifyInstance; base: string }> {
  const root = await tempDir();
  if (!empty) {
    await writeFile(join(root, 'index.html'), '<!doctype html><html><head><title>page</title></head><body><img src="/a.png"></body></html>');
    await writeFile(join(root, 'a.png'), Buffer.alloc(64, 1));
  }
  const app = Fastify({ logger: false });
  apps.push(app);
  // The public URL is the address clients reach: take a port first, then register.
  const listenPort = port ?? (await freePort());
  const base = `http://127.0.0.1:${listenPort}`;
  await app.register(webppOrigin, { publicUrl: base, adminToken: ADMIN_TOKEN, contentRoot: root, ...options });
  await feature(app);
  await app.register(fastifyStatic, { root });
  await app.listen({ host: '127.0.0.1', port: listenPort });
  return { app, base };
}

const MiB = 1024 * 1024;

describe('opt-in features registered by the app', () => {
  it('@webpp/origin/batch answers a worker’s page request with a batch, and asks the worker for batches', async () => {
    const { base } = await startWith((app) => app.register(webppBatch, { maxParts: 10 }));
    const batch = await fetch(`${base}/index.html`, { headers: { accept: BATCH_ACCEPT } });
    await batch.arrayBuffer();
    expect(batch.headers.get('content-type')).toBe(BATCH_MEDIA_TYPE);
    const plain = await fetch(`${base}/index.html`);
    expect(plain.headers.get('content-type')).toMatch(/^text\/html/);
    expect(await plain.text()).toContain('<script src="/webpp.js?features=batch" async></script>');
  });

  it('@webpp/origin/memory-cache answers the second request for a file from memory', async () => {
    const { app, base } = await startWith((app) => app.register(webppMemoryCache, { memoryCacheBytes: 1024 * 1024 }));
    expect(app.webpp.cache.enabled).toBe(true);
    // @fastify/static registered by hand does not declare its routes cacheable: put through the API.
    app.webpp.cache.put('/scores', 'fresh from memory', { contentType: 'text/plain', ttlMs: 60_000 });
    const response = await fetch(`${base}/scores`);
    expect(response.status).toBe(200);
    expect(await response.text()).toBe('fresh from memory');
    expect(app.webpp.cache.summary().localHits).toBe(1);
  });

  it('@webpp/origin/client-aggregate sends the aggregate header and takes reports at its endpoint', async () => {
    const { app, base } = await startWith((app) => app.register(webppClientAggregate, { clientAggregateMinReports: 5 }));
    expect(app.webpp.clientAggregate).toBeDefined();
    const page = await fetch(`${base}/index.html`);
    expect(page.headers.get(AGGREGATE_HEADER)).not.toBeNull();
    expect(await page.text()).toContain('<script src="/webpp.js?features=aggregate" async></script>');
    // The endpoint is there: a malformed report from the site's own page is refused as such (not a 404).
    const report = await fetch(`${base}${CLIENT_REPORT_PATH}`, { method: 'POST', headers: { origin: base, 'content-type': 'application/json' }, body: '{"rows":"no"}' });
    expect(report.status).toBe(400);
    expect(((await report.json()) as { code: string }).code).toBe('WEBPP_ERR_BAD_BODY');
  });

  it('@webpp/origin/replication places the hot resource of its server on the peer, which fetches its copy lazily', async () => {
    const ports = [await freePort(), await freePort()] as const;
    const [homeUrl, coopUrl] = ports.map((port) => `http://127.0.0.1:${port}`) as [string, string];
    // A cluster of two at test speed; only the home registers the feature.
    const cluster = (peer: string): Partial<WebppOriginOptions> => ({
      logicalOrigin: homeUrl,
      peers: [peer],
      clusterSecret: CLUSTER_SECRET,
      syncIntervalMs: 200,
      peerTimeoutMs: 1000,
      peerPingIntervalMs: 100,
      injectScript: false,
      [WEBPP_INTERNALS]: { replicationPeerMaxAgeMs: 5000 },
    });
    const home = await startWith(
      (app) => app.register(webppReplication, { replicationIntervalMs: 150, replicationHitThreshold: 5, replicationMinLoad: 0.01, autoReplicatePinned: ['/'] }),
      { port: ports[0], options: cluster(coopUrl) },
    );
    const coop = await startWith(async () => undefined, { port: ports[1], options: cluster(homeUrl), empty: true });
    expect(home.app.webpp.replication).toBeDefined();
    expect(coop.app.webpp.replication).toBeUndefined(); // the co-op does not decide…
    expect(home.app.webpp.options).toMatchObject({ autoReplicate: true, replicationHitThreshold: 5, replicationIntervalMs: 150 });
    await waitFor('the home to hold the co-op’s load record', () => home.app.webpp.peerState?.record(coopUrl) !== undefined);
    for (let i = 0; i < 20; i += 1) await (await fetch(`${homeUrl}/a.png`)).arrayBuffer();
    const logical = `${homeUrl}/a.png`;
    await waitFor('the co-op to list itself as a replica of /a.png', () => coop.app.webpp.directory.lookup(logical)?.physicalUrls.includes(`${coopUrl}/a.png`));
    expect(home.app.webpp.replication?.stats().placements).toBe(1);
    // …but serves the copy placed on it: fetched from the home on its first request.
    const copy = await fetch(`${coopUrl}/a.png`);
    expect(copy.status).toBe(200);
    expect(Buffer.from(await copy.arrayBuffer())).toEqual(Buffer.alloc(64, 1));
    expect(coop.app.webpp.lazyReplicas?.stats().fetches).toBe(1);
    const metrics = await (await fetch(`${homeUrl}${METRICS_PATH}`, { headers: auth })).text();
    expect(metrics).toContain('webpp_replication_decisions_total{kind="place"} 1');
    expect(await (await fetch(`${coopUrl}${METRICS_PATH}`, { headers: auth })).text()).not.toContain('webpp_replication_');
  });

  it('@webpp/origin/replication without peers does nothing, and a second registration is refused', async () => {
    const { app } = await startWith((app) => app.register(webppReplication, {}));
    expect(app.webpp.replication).toBeUndefined();
    const twice = Fastify({ logger: false }); // never listens
    const register = async (): Promise<void> => {
      await twice.register(webppOrigin, { publicUrl: 'http://127.0.0.1:1', peers: ['http://127.0.0.1:2'], clusterSecret: CLUSTER_SECRET, autoReplicate: true });
      await twice.register(webppReplication, {});
    };
    await expect(register()).rejects.toThrow(/@webpp\/origin\/replication is registered twice/);
    await twice.close().catch(() => undefined); // removes its temporary data folder
  });

  it('app.webpp.options shows the options of the features the app registered', async () => {
    const { app } = await startWith(async (app) => {
      await app.register(webppMemoryCache, { memoryCacheBytes: 4 * MiB, memoryCacheMaxEntryBytes: 64 * 1024, memoryCachePolicy: 'lru' });
      await app.register(webppBatch, { maxParts: 10 });
      await app.register(webppClientAggregate, { clientAggregateMinReports: 5 });
    });
    expect(app.webpp.options).toMatchObject({
      memoryCacheBytes: 4 * MiB,
      memoryCacheMaxEntryBytes: 64 * 1024,
      memoryCachePolicy: 'lru',
      batch: { maxParts: 10 },
      clientAggregate: true,
      clientAggregateMinReports: 5,
      autoReplicate: false,
    });
  });

  it('the cache management PUT takes bodies up to the registered cache’s memoryCacheMaxEntryBytes, not the default', async () => {
    const put = (base: string, bytes: number): Promise<Response> =>
      fetch(`${base}${CACHE_PREFIX}/entry`, { method: 'PUT', headers: { ...auth, 'content-type': 'application/octet-stream' }, body: Buffer.alloc(bytes, 7) });
    // Larger than webppOrigin's default (2 MiB).
    const large = await startWith((app) => app.register(webppMemoryCache, { memoryCacheBytes: 16 * MiB, memoryCacheMaxEntryBytes: 4 * MiB }));
    const stored = await put(large.base, 3 * MiB);
    expect(stored.status).toBe(200);
    expect(((await stored.json()) as { bodyBytes: number }).bodyBytes).toBe(3 * MiB);
    expect((await put(large.base, 4 * MiB + 1)).status).toBe(413);
    // Smaller: refused before it is read, with or without a Content-Length.
    const small = await startWith((app) => app.register(webppMemoryCache, { memoryCacheBytes: MiB, memoryCacheMaxEntryBytes: 64 * 1024 }));
    expect((await put(small.base, 100 * 1024)).status).toBe(413);
    const chunked = await small.app.inject({
      method: 'PUT',
      url: `${CACHE_PREFIX}/entry`,
      headers: { ...auth, 'content-type': 'application/octet-stream' },
      payload: Readable.from([Buffer.alloc(40 * 1024), Buffer.alloc(40 * 1024)]),
    });
    expect(chunked.statusCode).toBe(413);
    expect((await put(small.base, 60 * 1024)).status).toBe(200);
    // The invalidation call keeps its own limit (1 MiB).
    const invalidations = await fetch(`${small.base}${CACHE_INVALIDATIONS_PATH}`, { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: JSON.stringify({ paths: ['/entry'], pad: 'x'.repeat(MiB) }) });
    expect(invalidations.status).toBe(413);
  });

  it('a feature without webppOrigin is refused at registration', async () => {
    const app = Fastify({ logger: false }); // never listens: nothing to close
    await expect(app.register(webppBatch, {}).ready()).rejects.toThrow(/@webpp\/origin/);
  });

  it('without any feature, none of their endpoints exists', async () => {
    const { base } = await startWith(async () => undefined);
    const report = await fetch(`${base}${CLIENT_REPORT_PATH}`, { method: 'POST', headers: { origin: base, 'content-type': 'application/json' }, body: '{}' });
    expect(report.status).toBe(404);
    expect((await fetch(`${base}/index.html`)).headers.get(AGGREGATE_HEADER)).toBeNull();
  });
});
