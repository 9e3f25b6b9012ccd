/**
 * The memory cache on a real server (issue 15), over real loopback HTTP: static files, a
 * dynamic route and proxied upstream answers are served from memory, invalidated through
 * the in-process API and the HTTP endpoints, and their validators change with their content.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import Fastify, { type FastifyInstance } from 'fastify';
import { startReplicaServer, type ReplicaServer } from '../src/server.js';
import { ADMIN_TOKEN, auth, removeTempDirs, tempDir } from './helpers.js';

const CACHE_BYTES = 4 * 1024 * 1024;
let root: string;
let server: ReplicaServer;
let renders = 0;
let score = '1-0';

async function get(path: string, headers: Record<string, string> = {}): Promise<{ status: number; body: string; etag: string | null; headers: Headers }> {
  const response = await fetch(`${server.url}${path}`, { headers });
  return { status: response.status, body: await response.text(), etag: response.headers.get('etag'), headers: response.headers };
}

beforeAll(async () => {
  root = await tempDir();
  await writeFile(join(root, 'index.html'), '<!doctype html><html><head></head><body><img src="/logo.png">v1</body></html>');
  await writeFile(join(root, 'notes.txt'), 'first version');
  server = await startReplicaServer({
    root,
    adminToken: ADMIN_TOKEN,
    memoryCacheBytes: CACHE_BYTES,
    routes: (app) => {
      app.get('/score', { config: { webppCache: { ttlMs: 60_000 } } }, async (_request, reply) => {
        renders += 1;
        return reply.type('text/html; charset=utf-8').send(`<!doctype html><html><body>score ${score}</body></html>`);
      });
      app.get('/uncached', async () => {
        renders += 1;
        return `render ${renders}`;
      });
    },
  });
});

afterAll(async () => {
  await server?.close();
  await removeTempDirs();
});

describe('static files', () => {
  it('answers from memory until invalidated, then reads the file again with its new validator', async () => {
    const first = await get('/notes.txt');
    expect(first.body).toBe('first version');
    // Changed behind the server's back: the memory copy still answers (within memoryCacheTtlMs).
    await writeFile(join(root, 'notes.txt'), 'second version, longer');
    const hitsBefore = server.app.webpp.cache.summary().localHits;
    const cached = await get('/notes.txt');
    expect(cached.body).toBe('first version');
    expect(cached.etag).toBe(first.etag);
    expect(server.app.webpp.cache.summary().localHits).toBe(hitsBefore + 1);
    expect(server.app.webpp.cache.query('/notes.txt')?.source).toBe('static');

    expect(await server.app.webpp.cache.invalidate('/notes.txt')).toBe(1);
    const fresh = await get('/notes.txt');
    expect(fresh.body).toBe('second version, longer');
    expect(fresh.etag).not.toBe(first.etag);
    // A browser holding the old validator gets the new content, one holding the new gets a 304.
    expect((await get('/notes.txt', { 'if-none-match': first.etag ?? '' })).status).toBe(200);
    expect((await get('/notes.txt', { 'if-none-match': fresh.etag ?? '' })).status).toBe(304);
  });

  it('serves a cached page pre-processed (script injected), and answers its injected validator with a 304 from memory', async () => {
    const first = await get('/');
    expect(first.body).toContain('<script src="/webpp.js" async></script>');
    expect(first.etag).toMatch(/-webpp"$/);
    const hitsBefore = server.app.webpp.cache.summary().localHits;
    const again = await get('/');
    expect(again.body).toBe(first.body);
    const revalidated = await get('/', { 'if-none-match': first.etag ?? '' });
    expect(revalidated.status).toBe(304);
    expect(revalidated.etag).toBe(first.etag);
    expect(server.app.webpp.cache.summary().localHits).toBe(hitsBefore + 2);
  });

  it('does not answer byte ranges from memory', async () => {
    await get('/notes.txt');
    const hitsBefore = server.app.webpp.cache.summary().localHits;
    const response = await fetch(`${server.url}/notes.txt`, { headers: { range: 'bytes=0-5' } });
    expect(response.status).toBe(206);
    expect(await response.text()).toBe('second');
    expect(server.app.webpp.cache.summary().localHits).toBe(hitsBefore);
  });
});

describe('a dynamic route declared cacheable (dynamic mode)', () => {
  it('renders once, then answers from memory; the app invalidates it when its data changes', async () => {
    const rendersBefore = renders;
    const first = await get('/score');
    const second = await get('/score');
    expect(second.body).toBe(first.body);
    expect(renders).toBe(rendersBefore + 1);
    expect(first.etag).toMatch(/^"wpc-/); // made from the content: the route set none

    score = '1-1';
    await server.app.webpp.cache.invalidate('/score');
    const after = await get('/score');
    expect(after.body).toContain('score 1-1');
    expect(after.etag).not.toBe(first.etag);
    expect(renders).toBe(rendersBefore + 2);
    expect((await get('/score', { 'if-none-match': first.etag ?? '' })).status).toBe(200);
    expect((await get('/score', { 'if-none-match': after.etag ?? '' })).status).toBe(304);
    expect(renders).toBe(rendersBefore + 2);
  });

  it('is invalidated over HTTP with the admin token only, by path and by prefix', async () => {
    await get('/score');
    const rendersBefore = renders;
    const anonymous = await fetch(`${server.url}/.well-known/webpp/cache/score`, { method: 'DELETE' });
    expect(anonymous.status).toBe(401);
    await get('/score');
    expect(renders).toBe(rendersBefore);

    const deleted = await fetch(`${server.url}/.well-known/webpp/cache/score`, { method: 'DELETE', headers: auth });
    expect(await deleted.json()).toEqual({ invalidated: 1 });
    await get('/score');
    expect(renders).toBe(rendersBefore + 1);

    const byPrefix = await fetch(`${server.url}/.well-known/webpp/cache-invalidations`, {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json' },
      body: JSON.stringify({ prefixes: ['/sc'] }),
    });
    expect(await byPrefix.json()).toEqual({ invalidated: 1 });
    await get('/score');
    expect(renders).toBe(rendersBefore + 2);

    const bad = await fetch(`${server.url}/.well-known/webpp/cache-invalidations`, { method: 'POST', headers: auth, body: '{"everything": true}' });
    expect(bad.status).toBe(400);
  });

  it('leaves routes that do not declare themselves alone', async () => {
    const first = await get('/uncached');
    const second = await get('/uncached');
    expect(second.body).not.toBe(first.body);
    expect(server.app.webpp.cache.query('/uncached')).toBeUndefined();
  });
});

describe('the explicit API over HTTP', () => {
  it('puts a page that no route serves, with a lifetime, queries it, and serves it pre-processed', async () => {
    const put = await fetch(`${server.url}/.well-known/webpp/cache/promo`, {
      method: 'PUT',
      headers: { ...auth, 'content-type': 'text/html; charset=utf-8', 'webpp-cache-ttl-ms': '30000' },
      body: '<!doctype html><html><head></head><body>sale</body></html>',
    });
    expect(put.status).toBe(200);
    const stored = (await put.json()) as { stored: boolean; expiresAtMs: number; etag: string };
    expect(stored.stored).toBe(true);
    expect(stored.expiresAtMs).toBeGreaterThan(Date.now() + 20_000);

    const page = await get('/promo');
    expect(page.status).toBe(200);
    expect(page.body).toContain('sale');
    expect(page.body).toContain('<script src="/webpp.js" async></script>');

    const query = await fetch(`${server.url}/.well-known/webpp/cache/promo`, { headers: auth });
    expect(((await query.json()) as { hits: number }).hits).toBe(1);
    const missing = await fetch(`${server.url}/.well-known/webpp/cache/nothing-here`, { headers: auth });
    expect(missing.status).toBe(404);
    expect(((await missing.json()) as { code: string }).code).toBe('WEBPP_ERR_NOT_CACHED');
    const reserved = await fetch(`${server.url}/.well-known/webpp/cache/webpp.js`, { method: 'PUT', headers: auth, body: 'alert(1)' });
    expect(reserved.status).toBe(400);
    expect(((await reserved.json()) as { code: string }).code).toBe('WEBPP_ERR_BAD_PATH');
    const badTtl = await fetch(`${server.url}/.well-known/webpp/cache/promo`, { method: 'PUT', headers: { ...auth, 'webpp-cache-ttl-ms': '-5' }, body: 'x' });
    expect(badTtl.status).toBe(400);

    await fetch(`${server.url}/.well-known/webpp/cache/promo`, { method: 'DELETE', headers: auth });
    expect((await get('/promo')).status).toBe(404);
  });

  it('reports hits, misses, bytes and removals in the stats and /metrics', async () => {
    const stats = (await (await fetch(`${server.url}/.well-known/webpp/stats`, { headers: auth })).json()) as { origin: { memoryCache: Record<string, number | boolean> } };
    const cache = stats.origin.memoryCache;
    expect(cache.enabled).toBe(true);
    expect(cache.localHits).toBeGreaterThan(0);
    expect(cache.misses).toBeGreaterThan(0);
    expect(cache.bytesServed).toBeGreaterThan(0);
    expect(cache.invalidations).toBeGreaterThan(0);
    expect(cache.sizeBytes).toBeLessThanOrEqual(CACHE_BYTES);
    const metrics = await (await fetch(`${server.url}/.well-known/webpp/metrics`, { headers: auth })).text();
    expect(metrics).toContain(`webpp_memory_cache_hits_total{kind="local"} ${String(cache.localHits)}`);
    expect(metrics).toContain(`webpp_memory_cache_misses_total ${String(cache.misses)}`);
    expect(metrics).toMatch(/webpp_memory_cache_removals_total\{reason="evicted"\} \d+/);
  });
});

describe('proxy mode', () => {
  let upstream: FastifyInstance;
  let proxy: ReplicaServer;
  const upstreamHits = new Map<string, number>();

  beforeAll(async () => {
    upstream = Fastify();
    upstream.addHook('onRequest', async (request) => void upstreamHits.set(request.url, (upstreamHits.get(request.url) ?? 0) + 1));
    upstream.get('/fresh', async (_request, reply) => reply.header('cache-control', 'public, max-age=60').type('text/html').send('<html><body>fresh</body></html>'));
    upstream.get('/no-store', async (_request, reply) => reply.header('cache-control', 'no-store').send('secret'));
    upstream.get('/private', async (_request, reply) => reply.header('cache-control', 'private, max-age=60').send('mine'));
    upstream.get('/cookie', async (_request, reply) => reply.header('cache-control', 'max-age=60').header('set-cookie', 'session=abc').send('hello'));
    upstream.get('/unmarked', async () => 'no freshness given');
    const upstreamUrl = await upstream.listen({ port: 0, host: '127.0.0.1' });
    proxy = await startReplicaServer({ proxyUpstream: upstreamUrl, adminToken: ADMIN_TOKEN, memoryCacheBytes: CACHE_BYTES });
  });

  afterAll(async () => {
    await proxy?.close();
    await upstream?.close();
  });

  it('keeps what the upstream marks fresh, with its Age, and nothing it forbids a shared cache to keep', async () => {
    for (let i = 0; i < 3; i += 1) {
      for (const path of ['/fresh', '/no-store', '/private', '/cookie', '/unmarked']) {
        const response = await fetch(`${proxy.url}${path}`);
        expect(response.status).toBe(200);
        await response.text();
        if (path === '/fresh') expect(response.headers.get('cache-control')).toBe('public, max-age=60');
        if (path === '/fresh' && i > 0) expect(response.headers.get('age')).toMatch(/^\d+$/);
      }
    }
    expect(Object.fromEntries(upstreamHits)).toEqual({ '/fresh': 1, '/no-store': 3, '/private': 3, '/cookie': 3, '/unmarked': 3 });
    expect(proxy.app.webpp.cache.query('/fresh')?.expiresAtMs).toBeGreaterThan(Date.now() + 50_000);
    await proxy.app.webpp.cache.invalidate({ prefix: '/' });
    await (await fetch(`${proxy.url}/fresh`)).text();
    expect(upstreamHits.get('/fresh')).toBe(2);
  });
});

describe('off by default', () => {
  it('reads every request from its source when memoryCacheBytes is not set', async () => {
    const folder = await tempDir();
    await writeFile(join(folder, 'a.txt'), 'one');
    const plain = await startReplicaServer({ root: folder, adminToken: ADMIN_TOKEN });
    try {
      expect(await (await fetch(`${plain.url}/a.txt`)).text()).toBe('one');
      await writeFile(join(folder, 'a.txt'), 'two');
      expect(await (await fetch(`${plain.url}/a.txt`)).text()).toBe('two');
      expect(plain.app.webpp.cache.enabled).toBe(false);
      const put = await fetch(`${plain.url}/.well-known/webpp/cache/x`, { method: 'PUT', headers: auth, body: 'x' });
      expect(put.status).toBe(507);
    } finally {
      await plain.close();
    }
  });
});
