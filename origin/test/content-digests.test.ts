import { createHash } from 'node:crypto';
import { mkdir, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { ORIGIN_A, ORIGIN_B, auth, bindingsOf, buildApp, removeTempDirs, tempDir } from './helpers.js';

afterAll(removeTempDirs);
let app: FastifyInstance | undefined;
afterEach(async () => {
  await app?.close();
  app = undefined;
});

const directory = { formatVersion: 1 as const, entries: [{ logical: '/*', servers: [ORIGIN_A, ORIGIN_B] }] };
const PAGE = `<!doctype html><html><head><link rel="stylesheet" href="/style.css"></head>
<body><img src="img/cat.png"><img src="/.secret"><a href="/other.html">x</a><script src="/gone.js"></script></body></html>`;

function sri(content: string | Buffer): string {
  return `sha256-${createHash('sha256').update(content).digest('base64')}`;
}

async function site(files: Record<string, string>): Promise<string> {
  const root = await tempDir();
  for (const [name, content] of Object.entries(files)) {
    await mkdir(join(root, name, '..'), { recursive: true });
    await writeFile(join(root, name), content);
  }
  return root;
}

function digestsOf(header: string | string[] | number | undefined): Record<string, string> {
  return Object.fromEntries((bindingsOf(header)?.digests ?? []).map((digest) => [digest.logical, digest.integrity]));
}

describe('content digests in the bindings header', () => {
  it('gives the digest of every referenced static file, never of HTML, dotfiles or missing files', async () => {
    const files = { 'index.html': PAGE, 'other.html': '<p>x</p>', 'style.css': 'body{}', 'img/cat.png': 'PNG bytes', '.secret': 'no' };
    const root = await site(files);
    app = await buildApp({ directory, contentRoot: root, contentDigests: true }, { root });
    const response = await app.inject('/index.html');
    expect(digestsOf(response.headers['webpp-bindings'])).toEqual({
      [`${ORIGIN_A}/style.css`]: sri(files['style.css']),
      [`${ORIGIN_A}/img/cat.png`]: sri(files['img/cat.png']),
    });
    // A resource's own response carries its own digest (the worker refreshes what it holds).
    const own = await app.inject('/img/cat.png');
    expect(digestsOf(own.headers['webpp-bindings'])).toEqual({ [`${ORIGIN_A}/img/cat.png`]: sri(files['img/cat.png']) });
  });

  it('follows a changed file (new size or mtime): the next header has the new digest', async () => {
    const root = await site({ 'index.html': PAGE, 'style.css': 'body{}', 'img/cat.png': 'old' });
    app = await buildApp({ directory, contentRoot: root, contentDigests: true }, { root });
    const first = await app.inject('/index.html');
    expect(digestsOf(first.headers['webpp-bindings'])[`${ORIGIN_A}/img/cat.png`]).toBe(sri('old'));
    await writeFile(join(root, 'img/cat.png'), 'new!');
    const later = new Date(Date.now() + 5_000);
    await utimes(join(root, 'img/cat.png'), later, later);
    await new Promise((resolve) => setTimeout(resolve, 1_100)); // past revalidateMs
    const second = await app.inject('/index.html');
    expect(digestsOf(second.headers['webpp-bindings'])[`${ORIGIN_A}/img/cat.png`]).toBe(sri('new!'));
  });

  it('uses the stored digest of a replica created through the management API', async () => {
    const root = await site({ 'index.html': '<img src="/pic.bin">' });
    app = await buildApp({ directory: { formatVersion: 1, entries: [] }, contentRoot: root, contentDigests: true }, { root });
    const created = await app.inject({
      method: 'POST',
      url: '/.well-known/webpp/replicas/pic.bin',
      headers: { ...auth, 'content-type': 'application/octet-stream' },
      payload: Buffer.from('stored bytes'),
    });
    expect(created.statusCode).toBe(201);
    const page = await app.inject('/index.html');
    expect(digestsOf(page.headers['webpp-bindings'])).toEqual({ [`${ORIGIN_A}/pic.bin`]: sri('stored bytes') });
  });

  it('gives no digest for a stored HTML replica at a path without .html: its served bytes carry the script tag', async () => {
    const root = await site({ 'index.html': '<iframe src="/about"></iframe><img src="/pic.bin">' });
    app = await buildApp({ directory: { formatVersion: 1, entries: [] }, contentRoot: root, contentDigests: true }, { root });
    for (const [path, contentType, body] of [
      ['about', 'text/html; charset=utf-8', '<!doctype html><p>About us</p>'],
      ['pic.bin', 'application/octet-stream', 'stored bytes'],
    ] as const) {
      const created = await app.inject({
        method: 'POST',
        url: `/.well-known/webpp/replicas/${path}`,
        headers: { ...auth, 'content-type': contentType },
        payload: Buffer.from(body),
      });
      expect(created.statusCode).toBe(201);
    }
    const page = await app.inject('/index.html');
    expect(digestsOf(page.headers['webpp-bindings'])).toEqual({ [`${ORIGIN_A}/pic.bin`]: sri('stored bytes') });
    // What a replica would send for /about is not the stored bytes: a digest would fail the check.
    const about = await app.inject('/about');
    expect(about.body).not.toBe('<!doctype html><p>About us</p>');
    expect(about.body).toContain('About us');
  });

  it('sends no digests by default, when contentDigests is false, or for a server without contentRoot', async () => {
    const root = await site({ 'index.html': PAGE, 'style.css': 'body{}', 'img/cat.png': 'x' });
    app = await buildApp({ directory, contentRoot: root, contentDigests: false }, { root });
    const off = await app.inject('/index.html');
    expect(bindingsOf(off.headers['webpp-bindings'])?.bindings.length).toBeGreaterThan(0);
    expect(bindingsOf(off.headers['webpp-bindings'])?.digests).toBeUndefined();
    await app.close();
    app = await buildApp({ directory, contentRoot: root }, { root });
    const byDefault = await app.inject('/index.html');
    expect(bindingsOf(byDefault.headers['webpp-bindings'])?.digests).toBeUndefined();
    await app.close();
    app = await buildApp({ directory, contentDigests: true }, { root });
    const noRoot = await app.inject('/index.html');
    expect(bindingsOf(noRoot.headers['webpp-bindings'])?.digests).toBeUndefined();
  });
});
