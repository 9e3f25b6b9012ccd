import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { ORIGIN_A, ORIGIN_B, auth, buildApp, removeTempDirs, tempDir } from './helpers.js';
import { parseRange } from '../src/http/serve-replica.js';

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

describe('parseRange', () => {
  it('handles edge cases', () => {
    expect(parseRange(undefined, 10)).toBeUndefined();
    expect(parseRange('bytes=0-0', 10)).toEqual({ start: 0, end: 0 });
    expect(parseRange('bytes=-20', 10)).toEqual({ start: 0, end: 9 });
    expect(parseRange('bytes=-0', 10)).toBe('unsatisfiable');
    expect(parseRange('bytes=0-', 0)).toBe('unsatisfiable');
    expect(parseRange('bytes=-', 10)).toBeUndefined();
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
