import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import Fastify, { type FastifyInstance } from 'fastify';
import { ORIGIN_A, ORIGIN_B, auth, buildApp, removeTempDirs, tempDir } from './helpers.js';
import { webppOrigin } from '../src/plugin.js';
import { resolveOptions } from '../src/options.js';

afterAll(removeTempDirs);
let app: FastifyInstance | undefined;
afterEach(async () => {
  await app?.close();
  app = undefined;
});

const directory = {
  formatVersion: 1 as const,
  entries: [
    { logical: '/images/*', servers: [ORIGIN_A, ORIGIN_B] },
    { logical: '/a.html', physical: [`${ORIGIN_B}/copy/a.html`] },
  ],
};

describe('name service', () => {
  it('resolves logical URLs and paths to physical URLs, with CORS', async () => {
    app = await buildApp({ directory });
    const byPath = await app.inject(`/.well-known/webpp/resolve?url=${encodeURIComponent('/images/x/y.png')}`);
    expect(byPath.statusCode).toBe(200);
    expect(byPath.headers['access-control-allow-origin']).toBe('*');
    expect(byPath.json()).toEqual({
      url: `${ORIGIN_A}/images/x/y.png`,
      replicated: true,
      physicalUrls: [`${ORIGIN_A}/images/x/y.png`, `${ORIGIN_B}/images/x/y.png`],
      entry: `${ORIGIN_A}/images/*`,
      prefix: true,
      directoryVersion: app.webpp.directory.version,
    });
    const absolute = await app.inject(`/.well-known/webpp/resolve?url=${encodeURIComponent(`${ORIGIN_A}/a.html#frag`)}`);
    expect(absolute.json()).toMatchObject({ url: `${ORIGIN_A}/a.html`, physicalUrls: [`${ORIGIN_B}/copy/a.html`], prefix: false });
  });

  it('answers 404 for unknown URLs and 400 for bad input', async () => {
    app = await buildApp({ directory });
    const unknown = await app.inject('/.well-known/webpp/resolve?url=/nothing');
    expect(unknown.statusCode).toBe(404);
    expect(unknown.json()).toMatchObject({ replicated: false, physicalUrls: [] });
    expect((await app.inject('/.well-known/webpp/resolve')).statusCode).toBe(400);
    expect((await app.inject(`/.well-known/webpp/resolve?url=${encodeURIComponent('ftp://x/y')}`)).json().code).toBe('WEBPP_ERR_BAD_URL');
  });

  it('lists the whole directory', async () => {
    app = await buildApp({ directory });
    const listing = await app.inject('/.well-known/webpp/directory');
    expect(listing.json().entries).toEqual([
      { logical: `${ORIGIN_A}/a.html`, prefix: false, physical: [`${ORIGIN_B}/copy/a.html`] },
      { logical: `${ORIGIN_A}/images/*`, prefix: true, physical: [`${ORIGIN_A}/images/*`, `${ORIGIN_B}/images/*`] },
    ]);
  });
});

describe('statistics', () => {
  it('counts requests, bytes and service time per resource and in total', async () => {
    const root = await tempDir();
    await writeFile(join(root, 'one.txt'), '1234567890');
    await writeFile(join(root, 'two.txt'), '12345');
    app = await buildApp({}, { root });
    for (let i = 0; i < 3; i += 1) await app.inject('/one.txt');
    await app.inject('/two.txt');
    await app.inject('/.well-known/webpp/health'); // not counted: webpp's own endpoint
    const stats = (await app.inject({ url: '/.well-known/webpp/stats', headers: auth })).json();
    expect(stats.total).toMatchObject({ requests: 4, bytes: 35 });
    const one = stats.resources.find((resource: { resource: string }) => resource.resource === '/one.txt');
    expect(one).toMatchObject({ requests: 3, bytes: 30 });
    expect(one.requestsPerSecond).toBeGreaterThan(0);
    expect(one.serviceTimeEwmaMs).toBeGreaterThan(0);
    expect(stats.resources[0].resource).toBe('/one.txt'); // busiest first
    expect(stats.origin).toMatchObject({ directoryPairs: 0, storedReplicas: 0 });
  });

  it('exposes Prometheus text, and needs the admin token unless publicStats', async () => {
    app = await buildApp();
    await app.inject('/missing');
    expect((await app.inject('/.well-known/webpp/stats')).statusCode).toBe(401);
    expect((await app.inject('/.well-known/webpp/metrics')).statusCode).toBe(401);
    const metrics = await app.inject({ url: '/.well-known/webpp/metrics', headers: auth });
    expect(metrics.headers['content-type']).toContain('text/plain; version=0.0.4');
    expect(metrics.body).toContain('# TYPE webpp_requests_total counter');
    expect(metrics.body).toMatch(/^webpp_requests_total 1$/m);
    expect(metrics.body).toMatch(/^webpp_requests_total\{resource="\/missing"\} 1$/m);
    expect(metrics.body).toMatch(/^webpp_directory_version \d+$/m);
    const viaQuery = await app.inject({ url: '/.well-known/webpp/stats?format=prometheus', headers: auth });
    expect(viaQuery.body).toContain('webpp_service_time_ewma_ms');
    await app.close();
    app = await buildApp({ publicStats: true });
    const open = await app.inject('/.well-known/webpp/stats');
    expect(open.statusCode).toBe(200);
    expect(open.headers['access-control-allow-origin']).toBe('*');
  });
});

describe('client scripts', () => {
  it('serves the worker and page scripts with the headers a Service Worker needs', async () => {
    const bundle = await tempDir();
    await writeFile(join(bundle, 'webpp.js'), 'console.log("page")');
    await writeFile(join(bundle, 'webpp-sw.js'), 'self.addEventListener("fetch", () => {})');
    app = await buildApp({ clientBundleDir: bundle });
    for (const [url, body] of [['/webpp.js', 'console.log("page")'], ['/webpp-sw.js', 'self.addEventListener("fetch", () => {})']]) {
      const response = await app.inject(url as string);
      expect(response.statusCode).toBe(200);
      expect(response.body).toBe(body);
      expect(response.headers['content-type']).toBe('text/javascript; charset=utf-8');
      expect(response.headers['service-worker-allowed']).toBe('/');
      expect(response.headers['cache-control']).toBe('no-cache');
      const again = await app.inject({ url: url as string, headers: { 'if-none-match': String(response.headers.etag) } });
      expect(again.statusCode).toBe(304);
    }
    await writeFile(join(bundle, 'webpp.js'), 'console.log("rebuilt")');
    expect((await app.inject('/webpp.js')).body).toBe('console.log("rebuilt")');
  });

  it('answers 503 with an explanation when the bundle has not been built', async () => {
    app = await buildApp({ clientBundleDir: await tempDir() });
    const response = await app.inject('/webpp-sw.js');
    expect(response.statusCode).toBe(503);
    expect(response.json()).toMatchObject({ code: 'WEBPP_ERR_CLIENT_BUNDLE_MISSING' });
    expect(response.json().message).toContain('npm run build -w @webpp/sw');
  });

  it('serves them at custom paths', async () => {
    const bundle = await tempDir();
    await writeFile(join(bundle, 'webpp-sw.js'), 'sw');
    app = await buildApp({ clientBundleDir: bundle, workerPath: '/sw.js', scriptPath: '/client.js' });
    expect((await app.inject('/sw.js')).body).toBe('sw');
    expect((await app.inject('/webpp-sw.js')).statusCode).toBe(404);
  });
});

describe('options', () => {
  it.each([
    [{}, /publicUrl/],
    [{ publicUrl: 'not a url' }, /publicUrl must be an http/],
    [{ publicUrl: `${ORIGIN_A}/path` }, /origin without path/],
    [{ publicUrl: ORIGIN_A, adminToken: 'short' }, /adminToken/],
    [{ publicUrl: ORIGIN_A, peers: [ORIGIN_B] }, /clusterSecret is required/],
    [{ publicUrl: ORIGIN_A, cors: 'some' }, /cors/],
    [{ publicUrl: ORIGIN_A, syncIntervalMs: 1 }, /syncIntervalMs/],
    [{ publicUrl: ORIGIN_A, unknownOption: 1 }, /unknownOption/],
    [{ publicUrl: ORIGIN_A, preFilters: ['x'] }, /preFilters must be an array of functions/],
    [{ publicUrl: ORIGIN_A, scriptPath: '/same.js', workerPath: '/same.js' }, /must differ/],
    [{ publicUrl: ORIGIN_A, maxReplicaBytes: 0, statsRateHalfLifeMs: 0 }, /options\.maxReplicaBytes must be >= 1; options\.statsRateHalfLifeMs must be >= 1/],
    // An option that became a constant (issue 24) is named, with what to do.
    [{ publicUrl: ORIGIN_A, statsEwmaWeight: 0.5, memoryCacheHotCopies: 1 }, /options\.statsEwmaWeight, options\.memoryCacheHotCopies: removed \(issue 24\), now a constant; delete them/],
    [{ publicUrl: ORIGIN_A, batch: { maxParts: -1, compression: 'zip' } }, /options\.batch\.maxParts must be >= 0; options\.batch\.compression must be one of "auto", "never", "always"/],
    [{ publicUrl: ORIGIN_A, batch: { maxPart: 1 } }, /options\.batch\.maxPart is not an option/],
  ])('rejects %j with WEBPP_ERR_BAD_OPTIONS', (options, message) => {
    expect(() => resolveOptions(options as never)).toThrow(message);
    expect(() => resolveOptions(options as never)).toThrow(expect.objectContaining({ code: 'WEBPP_ERR_BAD_OPTIONS' }));
  });

  it('fills in defaults and drops itself from the peer list', () => {
    const resolved = resolveOptions({ publicUrl: `${ORIGIN_A}/`, peers: [ORIGIN_A, ORIGIN_B, `${ORIGIN_B}/`], clusterSecret: 'x'.repeat(16) });
    expect(resolved).toMatchObject({ publicUrl: ORIGIN_A, logicalOrigin: ORIGIN_A, peers: [ORIGIN_B], injectScript: true, cors: 'replicated', killSwitch: false });
  });

  it('fills in every default the schema states, batch options included', () => {
    const resolved = resolveOptions({ publicUrl: ORIGIN_A, batch: true });
    expect(resolved).toMatchObject({ maxReplicaBytes: 50 * 1024 * 1024, syncIntervalMs: 10_000, statsEwmaWeight: 0.1, scriptPath: '/webpp.js', preFilters: [] });
    expect(resolved.batch).toMatchObject({ enabled: true, maxParts: 100, compression: 'auto' });
    expect(resolveOptions({ publicUrl: ORIGIN_A }).batch).toBe(false);
  });

  it('makes registration fail with a coded error', async () => {
    const bad = Fastify();
    await expect(bad.register(webppOrigin, { publicUrl: 'nope' }).ready()).rejects.toMatchObject({ code: 'WEBPP_ERR_BAD_OPTIONS' });
    await bad.close();
  });
});
