/**
 * The opt-in features as plugins of their own (issue 24): each, registered by the app from its
 * entry point after webppOrigin (`@webpp/origin/batch`, `/memory-cache`, `/client-aggregate`),
 * does what its option does: batches, cache hits, the aggregate header and the report
 * endpoint, on real HTTP. Their hooks' order is response-path.test.ts's.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import Fastify, { type FastifyInstance } from 'fastify';
import fastifyStatic from '@fastify/static';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { AGGREGATE_HEADER, BATCH_ACCEPT, BATCH_MEDIA_TYPE, CLIENT_REPORT_PATH } from '@webpp/core';
import { webppOrigin } from '../src/plugin.js';
import { webppBatch } from '../src/features/batch.js';
import { webppMemoryCache } from '../src/features/memory-cache.js';
import { webppClientAggregate } from '../src/features/client-aggregate.js';
import { ADMIN_TOKEN, freePort, removeTempDirs, tempDir } from './helpers.js';

const apps: FastifyInstance[] = [];
afterEach(async () => {
  await Promise.all(apps.splice(0).map((app) => app.close()));
});
afterAll(removeTempDirs);

/** webppOrigin, then `feature` as the app registers it, then a static site; listening on 127.0.0.1. */
async function startWith(feature: (app: FastifyInstance) => PromiseLike<unknown>): Promise<{ app: FastifyInstance; base: string }> {
  const root = await tempDir();
  await writeFile(join(root, 'index.html'), '<!doctype html><html><head><title>page</title></head><body><img src="/a.png"></body></html>');
  await writeFile(join(root, 'a.png'), Buffer.alloc(64, 1));
  const app = Fastify({ logger: false });
  apps.push(app);
  // The public URL is the address clients reach: take a port first, then register.
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  await app.register(webppOrigin, { publicUrl: base, adminToken: ADMIN_TOKEN });
  await feature(app);
  await app.register(fastifyStatic, { root });
  await app.listen({ host: '127.0.0.1', port });
  return { app, base };
}

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
