import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { utimes, writeFile, mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { ORIGIN_A, ORIGIN_B, ORIGIN_C, bindingMap, bindingsOf, buildApp, removeTempDirs, tempDir } from './helpers.js';

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
    { logical: '/style.css', servers: [ORIGIN_A, ORIGIN_C] },
    { logical: '/index.html', servers: [ORIGIN_A, ORIGIN_B] },
    { logical: '/mirror.html', physical: [`${ORIGIN_C}/copies/mirror.html`] },
  ],
};

async function site(files: Record<string, string>): Promise<string> {
  const root = await tempDir();
  for (const [name, content] of Object.entries(files)) {
    await mkdir(join(root, name, '..'), { recursive: true });
    await writeFile(join(root, name), content);
  }
  return root;
}

const PAGE = `<!doctype html><html><head><link rel="stylesheet" href="/style.css"></head>
<body><img src="images/cat.jpg"><img src="/images/dog.jpg"><a href="/elsewhere.html">x</a></body></html>`;

describe('bindings on HTML responses', () => {
  it('sends the bindings of a static page: its own, then prefix, then exact ones', async () => {
    const root = await site({ 'index.html': PAGE });
    app = await buildApp({ directory }, { root });
    const response = await app.inject('/index.html');
    expect(response.statusCode).toBe(200);
    const document = bindingsOf(response.headers['webpp-bindings']);
    expect(document?.bindings.map((binding) => binding.logical)).toEqual([
      `${ORIGIN_A}/index.html`,
      `${ORIGIN_A}/images/`,
      `${ORIGIN_A}/style.css`,
    ]);
    expect(bindingMap(response.headers['webpp-bindings'])).toEqual({
      [`${ORIGIN_A}/index.html`]: [`${ORIGIN_A}/index.html`, `${ORIGIN_B}/index.html`],
      [`${ORIGIN_A}/images/*`]: [`${ORIGIN_A}/images/`, `${ORIGIN_B}/images/`],
      [`${ORIGIN_A}/style.css`]: [`${ORIGIN_A}/style.css`, `${ORIGIN_C}/style.css`],
    });
    expect(document?.directoryVersion).toBe(app.webpp.directory.version);
  });

  it('pre-processes dynamic route output (string and stream payloads)', async () => {
    app = await buildApp(
      { directory },
      {
        routes: (instance) => {
          instance.get('/dynamic', async (_request, reply) => reply.type('text/html; charset=utf-8').send('<img src="/images/a.png">'));
          instance.get('/streamed', async (_request, reply) => {
            const { Readable } = await import('node:stream');
            return reply.type('text/html').send(Readable.from([Buffer.from('<link href="/sty'), Buffer.from('le.css" rel=stylesheet>')]));
          });
          instance.get('/json', async () => ({ html: '<img src="/images/a.png">' }));
        },
      },
    );
    const dynamic = await app.inject('/dynamic');
    expect(Object.keys(bindingMap(dynamic.headers['webpp-bindings']))).toEqual([`${ORIGIN_A}/images/*`]);
    expect(dynamic.body).toBe('<script src="/webpp.js" async></script><img src="/images/a.png">');
    const streamed = await app.inject('/streamed');
    expect(Object.keys(bindingMap(streamed.headers['webpp-bindings']))).toEqual([`${ORIGIN_A}/style.css`]);
    expect(streamed.headers['content-length']).toBe(String(Buffer.byteLength(streamed.body)));
    const json = await app.inject('/json');
    expect(json.headers['webpp-bindings']).toBeUndefined();
  });

  it('resolves references of a replica page against its logical URL', async () => {
    // This server is ORIGIN_C; /copies/mirror.html here is a replica of ORIGIN_A/mirror.html.
    app = await buildApp(
      { publicUrl: ORIGIN_C, logicalOrigin: ORIGIN_A, directory },
      { routes: (instance) => instance.get('/copies/mirror.html', async (_q, reply) => reply.type('text/html').send('<img src="images/x.png">')) },
    );
    const response = await app.inject('/copies/mirror.html');
    expect(bindingMap(response.headers['webpp-bindings'])).toEqual({
      [`${ORIGIN_A}/mirror.html`]: [`${ORIGIN_C}/copies/mirror.html`],
      [`${ORIGIN_A}/images/*`]: [`${ORIGIN_A}/images/`, `${ORIGIN_B}/images/`],
    });
    expect(response.headers['access-control-allow-origin']).toBe('*');
  });

  it('sends no header for a page that references nothing replicated', async () => {
    const root = await site({ 'plain.html': '<a href="/nowhere">x</a>' });
    app = await buildApp({ directory }, { root });
    const response = await app.inject('/plain.html');
    expect(response.headers['webpp-bindings']).toBeUndefined();
    expect(response.headers['access-control-allow-origin']).toBeUndefined();
  });

  it('does not inject when injectScript is false, and keeps the static ETag', async () => {
    const root = await site({ 'index.html': PAGE });
    app = await buildApp({ directory, injectScript: false }, { root });
    const response = await app.inject('/index.html');
    expect(response.body).toBe(PAGE);
    expect(response.headers.etag).not.toContain('-webpp');
    expect(response.headers['webpp-bindings']).toBeDefined();
  });

  it('gives injected pages their own validator and answers conditional requests with 304 + bindings', async () => {
    const root = await site({ 'index.html': PAGE });
    app = await buildApp({ directory }, { root });
    const first = await app.inject('/index.html');
    const etag = String(first.headers.etag);
    expect(etag).toMatch(/-webpp"$/);
    expect(first.body.startsWith('<!doctype html><html><head><script src="/webpp.js" async></script>')).toBe(true);
    const second = await app.inject({ url: '/index.html', headers: { 'if-none-match': etag } });
    expect(second.statusCode).toBe(304);
    expect(second.headers.etag).toBe(etag);
    expect(second.headers['webpp-bindings']).toBe(first.headers['webpp-bindings']);
  });
});

describe('bindings on other responses', () => {
  it('binds url() and @import references of style sheets, plus the sheet itself', async () => {
    const root = await site({ 'style.css': '@import "/images/base.css"; body { background: url(images/bg.png) }' });
    app = await buildApp({ directory }, { root });
    const response = await app.inject('/style.css');
    expect(bindingMap(response.headers['webpp-bindings'])).toEqual({
      [`${ORIGIN_A}/style.css`]: [`${ORIGIN_A}/style.css`, `${ORIGIN_C}/style.css`],
      [`${ORIGIN_A}/images/*`]: [`${ORIGIN_A}/images/`, `${ORIGIN_B}/images/`],
    });
  });

  it('gives any replicated resource its own binding and CORS headers', async () => {
    const root = await site({ 'images/cat.jpg': 'JPEGDATA', 'other.bin': 'x' });
    app = await buildApp({ directory }, { root });
    const response = await app.inject('/images/cat.jpg');
    expect(bindingMap(response.headers['webpp-bindings'])).toEqual({
      [`${ORIGIN_A}/images/*`]: [`${ORIGIN_A}/images/`, `${ORIGIN_B}/images/`],
    });
    expect(response.headers['access-control-allow-origin']).toBe('*');
    expect(response.headers['timing-allow-origin']).toBe('*');
    expect(String(response.headers['access-control-expose-headers'])).toContain('webpp-bindings');
    expect(String(response.headers['access-control-expose-headers'])).toContain('etag');
    const other = await app.inject('/other.bin');
    expect(other.headers['webpp-bindings']).toBeUndefined();
    expect(other.headers['access-control-allow-origin']).toBeUndefined();
    // Any status of a replicated resource: the worker must read a 404 (a stale binding), not a network error.
    const missing = await app.inject('/images/missing.png');
    expect(missing.statusCode).toBe(404);
    expect(missing.headers['access-control-allow-origin']).toBe('*');
  });

  it('honours cors: "all" and cors: "off"', async () => {
    const root = await site({ 'other.bin': 'x', 'images/a.png': 'y' });
    app = await buildApp({ directory, cors: 'all' }, { root });
    expect((await app.inject('/other.bin')).headers['access-control-allow-origin']).toBe('*');
    await app.close();
    app = await buildApp({ directory, cors: 'off' }, { root });
    const response = await app.inject('/images/a.png');
    expect(response.headers['access-control-allow-origin']).toBeUndefined();
    expect(response.headers['webpp-bindings']).toBeDefined();
  });
});

describe('pre-processing cache', () => {
  it('serves repeated requests from the cache and reparses after a directory change', async () => {
    const root = await site({ 'index.html': PAGE });
    app = await buildApp({ directory }, { root });
    const first = await app.inject('/index.html');
    const missesAfterFirst = app.webpp.preprocessCache.misses;
    const second = await app.inject('/index.html');
    expect(app.webpp.preprocessCache.misses).toBe(missesAfterFirst);
    expect(app.webpp.preprocessCache.hits).toBeGreaterThan(0);
    expect(second.body).toBe(first.body);
    expect(second.headers['webpp-bindings']).toBe(first.headers['webpp-bindings']);

    app.webpp.directory.addReplica(`${ORIGIN_A}/elsewhere.html`, `${ORIGIN_C}/elsewhere.html`);
    const third = await app.inject('/index.html');
    expect(bindingMap(third.headers['webpp-bindings'])[`${ORIGIN_A}/elsewhere.html`]).toEqual([`${ORIGIN_C}/elsewhere.html`]);
    expect(bindingsOf(third.headers['webpp-bindings'])?.directoryVersion).toBeGreaterThan(
      bindingsOf(first.headers['webpp-bindings'])?.directoryVersion ?? Infinity,
    );
  });

  it('reparses a file that changed on disk', async () => {
    const root = await site({ 'page.html': '<img src="/images/a.png">' });
    app = await buildApp({ directory }, { root });
    expect(Object.keys(bindingMap((await app.inject('/page.html')).headers['webpp-bindings']))).toEqual([`${ORIGIN_A}/images/*`]);
    await writeFile(join(root, 'page.html'), '<link rel=stylesheet href="/style.css">');
    const later = new Date(Date.now() + 5000);
    await utimes(join(root, 'page.html'), later, later);
    const response = await app.inject('/page.html');
    expect(Object.keys(bindingMap(response.headers['webpp-bindings']))).toEqual([`${ORIGIN_A}/style.css`]);
    expect(response.body).toContain('/style.css');
  });

  it('stays within its byte bound', async () => {
    const pages: Record<string, string> = {};
    for (let i = 0; i < 20; i += 1) pages[`p${i}.html`] = `<img src="/images/${i}.png">${'x'.repeat(2000)}`;
    const root = await site(pages);
    app = await buildApp({ directory, preprocessCacheBytes: 10_000 }, { root });
    for (let i = 0; i < 20; i += 1) await app.inject(`/p${i}.html`);
    expect(app.webpp.preprocessCache.bytes).toBeLessThanOrEqual(10_000);
    expect(app.webpp.preprocessCache.size).toBeGreaterThan(0);
    expect(app.webpp.preprocessCache.size).toBeLessThan(20);
  });

  it('leaves bodies over maxPreprocessBytes untouched, with only their own binding', async () => {
    const big = `<img src="/images/a.png">${'y'.repeat(5000)}`;
    const root = await site({ 'index.html': big });
    app = await buildApp({ directory, maxPreprocessBytes: 1000 }, { root });
    const response = await app.inject('/index.html');
    expect(response.body).toBe(big);
    expect(Object.keys(bindingMap(response.headers['webpp-bindings']))).toEqual([`${ORIGIN_A}/index.html`]);
  });
});

describe('kill switch', () => {
  it('sends webpp-control: off on every response, and can be flipped at run time', async () => {
    const root = await site({ 'index.html': PAGE, 'images/a.png': 'x' });
    app = await buildApp({ directory, killSwitch: true }, { root });
    for (const url of ['/index.html', '/images/a.png', '/missing', '/.well-known/webpp/health']) {
      expect((await app.inject(url)).headers['webpp-control']).toBe('off');
    }
    app.webpp.killSwitch = false;
    const response = await app.inject('/index.html');
    expect(response.headers['webpp-control']).toBeUndefined();
    expect(response.headers['webpp-bindings']).toBeDefined();
  });
});
