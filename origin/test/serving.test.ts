import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { ORIGIN_A, ORIGIN_B, auth, buildApp, removeTempDirs, tempDir } from './helpers.js';

afterAll(removeTempDirs);
let app: FastifyInstance;
const CONTENT = 'abcdefghijklmnopqrstuvwxyz';

beforeEach(async () => {
  app = await buildApp();
  const created = await app.inject({ method: 'POST', url: '/.well-known/webpp/replicas/letters.txt', headers: { ...auth, 'content-type': 'text/plain' }, payload: CONTENT });
  expect(created.statusCode).toBe(201);
});
afterEach(async () => {
  await app.close();
});

describe('replica responses', () => {
  it('answers HEAD with the headers of GET and no body', async () => {
    const get = await app.inject('/letters.txt');
    const head = await app.inject({ method: 'HEAD', url: '/letters.txt' });
    expect(head.statusCode).toBe(200);
    expect(head.body).toBe('');
    expect(head.headers['content-length']).toBe(String(CONTENT.length));
    for (const name of ['etag', 'content-type', 'webpp-bindings', 'access-control-allow-origin', 'accept-ranges']) {
      expect(head.headers[name]).toBe(get.headers[name]);
    }
  });

  it('serves single byte ranges with 206 and Content-Range', async () => {
    const cases: [string, string, string][] = [
      ['bytes=0-4', 'abcde', 'bytes 0-4/26'],
      ['bytes=20-', 'uvwxyz', 'bytes 20-25/26'],
      ['bytes=-3', 'xyz', 'bytes 23-25/26'],
      ['bytes=24-100', 'yz', 'bytes 24-25/26'],
    ];
    for (const [range, body, contentRange] of cases) {
      const response = await app.inject({ url: '/letters.txt', headers: { range } });
      expect(response.statusCode).toBe(206);
      expect(response.body).toBe(body);
      expect(response.headers['content-range']).toBe(contentRange);
      expect(response.headers['content-length']).toBe(String(body.length));
      expect(response.headers['access-control-allow-origin']).toBe('*');
    }
  });

  it('answers unsatisfiable ranges with 416 and ignores multi-range and malformed ones', async () => {
    const unsatisfiable = await app.inject({ url: '/letters.txt', headers: { range: 'bytes=26-' } });
    expect(unsatisfiable.statusCode).toBe(416);
    expect(unsatisfiable.headers['content-range']).toBe('bytes */26');
    for (const range of ['bytes=0-1,3-4', 'items=0-1', 'bytes=5-2']) {
      const response = await app.inject({ url: '/letters.txt', headers: { range } });
      expect(response.statusCode).toBe(200);
      expect(response.body).toBe(CONTENT);
    }
  });

  it('honours If-Range: a stale validator gets the whole, current body', async () => {
    const etag = String((await app.inject('/letters.txt')).headers.etag);
    expect((await app.inject({ url: '/letters.txt', headers: { range: 'bytes=0-1', 'if-range': etag } })).statusCode).toBe(206);
    const stale = await app.inject({ url: '/letters.txt', headers: { range: 'bytes=0-1', 'if-range': '"sha256-old"' } });
    expect(stale.statusCode).toBe(200);
    expect(stale.body).toBe(CONTENT);
  });

  it('answers If-None-Match with 304 while the content is unchanged', async () => {
    const etag = String((await app.inject('/letters.txt')).headers.etag);
    expect((await app.inject({ url: '/letters.txt', headers: { 'if-none-match': etag } })).statusCode).toBe(304);
    expect((await app.inject({ url: '/letters.txt', headers: { 'if-none-match': `"x", ${etag}` } })).statusCode).toBe(304);
    await app.inject({ method: 'PUT', url: '/.well-known/webpp/replicas/letters.txt', headers: auth, payload: 'new' });
    const changed = await app.inject({ url: '/letters.txt', headers: { 'if-none-match': etag } });
    expect(changed.statusCode).toBe(200);
    expect(changed.body).toBe('new');
    expect(changed.headers.etag).not.toBe(etag);
  });

  it('carries the content digest as the validator of its own binding', async () => {
    const { bindingsOf } = await import('./helpers.js');
    const response = await app.inject('/letters.txt');
    expect(bindingsOf(response.headers['webpp-bindings'])?.bindings[0]).toMatchObject({
      logical: `${ORIGIN_A}/letters.txt`,
      validator: response.headers.etag,
    });
  });

  it('answers CORS preflights for GET/HEAD with Range, and refuses other methods', async () => {
    const preflight = await app.inject({
      method: 'OPTIONS',
      url: '/letters.txt',
      headers: { origin: 'http://c.localhost:1', 'access-control-request-method': 'GET', 'access-control-request-headers': 'Range' },
    });
    expect(preflight.statusCode).toBe(204);
    expect(preflight.headers['access-control-allow-origin']).toBe('*');
    expect(String(preflight.headers['access-control-allow-headers'])).toContain('range');
    expect(String(preflight.headers['access-control-allow-methods'])).toBe('GET, HEAD');
    const put = await app.inject({
      method: 'OPTIONS',
      url: '/letters.txt',
      headers: { origin: 'http://c.localhost:1', 'access-control-request-method': 'PUT' },
    });
    expect(put.headers['access-control-allow-origin']).toBeUndefined();
  });
});

describe('the content of a replica that was served', () => {
  it('is deleted once the replica is updated (nothing keeps it after its responses end)', async () => {
    const blobs = join(app.webpp.dataDir, 'replicas', 'blobs');
    expect(await readdir(blobs)).toHaveLength(1);
    expect((await app.inject('/letters.txt')).body).toBe(CONTENT);
    expect((await app.inject({ url: '/letters.txt', headers: { range: 'bytes=1-2' } })).body).toBe('bc');
    expect((await app.inject({ method: 'HEAD', url: '/letters.txt' })).statusCode).toBe(200);
    const put = await app.inject({ method: 'PUT', url: '/.well-known/webpp/replicas/letters.txt', headers: auth, payload: 'new' });
    expect(put.statusCode).toBe(200);
    expect((await app.inject('/letters.txt')).body).toBe('new');
    expect(await readdir(blobs)).toHaveLength(1);
  });
});

describe('range edge cases of stored replicas', () => {
  it('answers a zero-length suffix and any range of an empty replica with 416, and ignores a range without bounds', async () => {
    const zeroSuffix = await app.inject({ url: '/letters.txt', headers: { range: 'bytes=-0' } });
    expect(zeroSuffix.statusCode).toBe(416);
    expect(zeroSuffix.headers['content-range']).toBe('bytes */26');
    expect(zeroSuffix.body).toBe('');
    const whole = await app.inject({ url: '/letters.txt', headers: { range: 'bytes=-' } });
    expect(whole.statusCode).toBe(200);
    expect(whole.body).toBe(CONTENT);
    const first = await app.inject({ url: '/letters.txt', headers: { range: 'bytes=0-0' } });
    expect([first.statusCode, first.body]).toEqual([206, 'a']);
    await app.inject({ method: 'POST', url: '/.well-known/webpp/replicas/empty.txt', headers: { ...auth, 'content-type': 'text/plain' }, payload: '' });
    const empty = await app.inject({ url: '/empty.txt', headers: { range: 'bytes=0-' } });
    expect(empty.statusCode).toBe(416);
    expect(empty.headers['content-range']).toBe('bytes */0');
  });

  it('answers a HEAD with a range like the GET, without the body', async () => {
    const head = await app.inject({ method: 'HEAD', url: '/letters.txt', headers: { range: 'bytes=2-5' } });
    expect(head.statusCode).toBe(206);
    expect(head.headers['content-range']).toBe('bytes 2-5/26');
    expect(head.headers['content-length']).toBe('4');
    expect(head.body).toBe('');
  });

  it('honours If-Range with the Last-Modified date, and answers If-Modified-Since with 304', async () => {
    const lastModified = String((await app.inject('/letters.txt')).headers['last-modified']);
    expect((await app.inject({ url: '/letters.txt', headers: { range: 'bytes=0-1', 'if-range': lastModified } })).statusCode).toBe(206);
    const older = new Date(Date.parse(lastModified) - 60_000).toUTCString();
    expect((await app.inject({ url: '/letters.txt', headers: { range: 'bytes=0-1', 'if-range': older } })).statusCode).toBe(200);
    const notModified = await app.inject({ url: '/letters.txt', headers: { 'if-modified-since': lastModified } });
    expect(notModified.statusCode).toBe(304);
    expect(notModified.headers['content-type']).toBeUndefined();
    expect((await app.inject({ url: '/letters.txt', headers: { 'if-modified-since': older } })).statusCode).toBe(200);
  });
});

describe('HEAD and Range on static files with the plugin', () => {
  it('keeps @fastify/static range support for non-HTML files and CORS on replicated ones', async () => {
    const root = await tempDir();
    await writeFile(join(root, 'data.bin'), CONTENT);
    const staticApp = await buildApp({ directory: { formatVersion: 1, entries: [{ logical: '/data.bin', servers: [ORIGIN_A, ORIGIN_B] }] } }, { root });
    try {
      const ranged = await staticApp.inject({ url: '/data.bin', headers: { range: 'bytes=2-3' } });
      expect(ranged.statusCode).toBe(206);
      expect(ranged.body).toBe('cd');
      expect(ranged.headers['access-control-allow-origin']).toBe('*');
      expect(ranged.headers['webpp-bindings']).toBeDefined();
      const head = await staticApp.inject({ method: 'HEAD', url: '/data.bin' });
      expect(head.statusCode).toBe(200);
      expect(head.headers['content-length']).toBe(String(CONTENT.length));
      expect(head.headers['webpp-bindings']).toBeDefined();
    } finally {
      await staticApp.close();
    }
  });
});
