/**
 * Every route that answers 304 follows one rule (http/conditional.ts, RFC 9110 Section 13.1):
 * If-None-Match with the weak comparison over a list, `*` matching any current
 * representation, If-Modified-Since only without If-None-Match, and a request's
 * `Cache-Control: no-cache` (which fetch adds in cache mode 'no-store') not turning a match
 * into a 200. Before, the client scripts and the peer content route matched neither `*` nor
 * a weak tag. A lazy copy still on its way answers through the same function
 * (http/lazy-replicas-plugin.ts), not exercised here.
 */
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { CLUSTER_AUTH_HEADER, signClusterRequest } from '../src/http/auth.js';
import { PEER_CONTENT_PATH } from '../src/routes/peer-content.js';
import { CLUSTER_SECRET, ORIGIN_A, auth, buildApp, removeTempDirs, tempDir } from './helpers.js';

afterAll(removeTempDirs);
let app: FastifyInstance | undefined;
afterEach(async () => {
  await app?.close();
  app = undefined;
});

/** The conditions every route must answer alike: [If-None-Match and other headers, given the current ETag] → 304? */
function conditions(etag: string): Array<[string, Record<string, string>, boolean]> {
  return [
    ['the current ETag', { 'if-none-match': etag }, true],
    ['the current ETag, weak', { 'if-none-match': `W/${etag}` }, true],
    ['`*`', { 'if-none-match': '*' }, true],
    ['a list holding it', { 'if-none-match': `"other", W/"another",${etag}` }, true],
    ['a list without it', { 'if-none-match': '"other", W/"another"' }, false],
    ['the current ETag with Cache-Control: no-cache', { 'if-none-match': etag, 'cache-control': 'no-cache' }, true],
    ['another ETag and a later If-Modified-Since', { 'if-none-match': '"other"', 'if-modified-since': new Date(Date.now() + 86_400_000).toUTCString() }, false],
  ];
}

describe('one conditional-request rule', () => {
  it('for the client scripts', async () => {
    const bundle = await tempDir();
    await writeFile(join(bundle, 'webpp-sw.js'), 'self.addEventListener("fetch", () => {})');
    app = await buildApp({ clientBundleDir: bundle });
    const etag = String((await app.inject('/webpp-sw.js')).headers.etag);
    for (const [name, headers, notModified] of conditions(etag)) {
      const response = await app.inject({ url: '/webpp-sw.js', headers });
      expect(response.statusCode, name).toBe(notModified ? 304 : 200);
    }
  });

  it('for the peer content route', async () => {
    const contentRoot = await tempDir();
    await writeFile(join(contentRoot, 'a.css'), 'body { color: red }');
    app = await buildApp({ contentRoot, clusterSecret: CLUSTER_SECRET, dataDir: await tempDir() });
    const url = `${PEER_CONTENT_PATH}/a.css`;
    const signedGet = (headers: Record<string, string>) =>
      app!.inject({ url, headers: { ...headers, [CLUSTER_AUTH_HEADER]: signClusterRequest(CLUSTER_SECRET, 'GET', new URL(url, ORIGIN_A), new Uint8Array(0), { headers }) } });
    const first = await signedGet({});
    expect(first.statusCode).toBe(200);
    const etag = String(first.headers.etag);
    for (const [name, headers, notModified] of conditions(etag)) {
      expect((await signedGet(headers)).statusCode, name).toBe(notModified ? 304 : 200);
    }
    // A co-op resuming a cut fetch: the rest from byte 5 while the content is the one it began.
    const rest = await signedGet({ range: 'bytes=5-', 'if-range': etag });
    expect([rest.statusCode, rest.headers['content-range'], rest.body]).toEqual([206, 'bytes 5-18/19', '{ color: red }']);
    const changed = await signedGet({ range: 'bytes=5-', 'if-range': '"sha256-older"' });
    expect([changed.statusCode, changed.body]).toEqual([200, 'body { color: red }']);
    const pastTheEnd = await signedGet({ range: 'bytes=19-', 'if-range': etag });
    expect([pastTheEnd.statusCode, pastTheEnd.body]).toEqual([200, 'body { color: red }']);
  });

  it('for a stored replica', async () => {
    app = await buildApp({ dataDir: await tempDir() });
    const put = await app.inject({ method: 'POST', url: '/.well-known/webpp/replicas/r.txt', headers: { ...auth, 'content-type': 'text/plain' }, payload: 'replica' });
    expect(put.statusCode).toBeLessThan(300);
    const first = await app.inject('/r.txt');
    expect(first.statusCode).toBe(200);
    const etag = String(first.headers.etag);
    for (const [name, headers, notModified] of conditions(etag)) {
      expect((await app.inject({ url: '/r.txt', headers })).statusCode, name).toBe(notModified ? 304 : 200);
    }
    const since = { 'if-modified-since': String(first.headers['last-modified']) };
    expect((await app.inject({ url: '/r.txt', headers: since })).statusCode).toBe(304);
  });

  it('for a memory cache hit', async () => {
    app = await buildApp({ memoryCacheBytes: 1024 * 1024 });
    app.webpp.cache.put('/scores', 'from memory', { contentType: 'text/plain', ttlMs: 60_000 });
    const first = await app.inject('/scores');
    expect([first.statusCode, first.body]).toEqual([200, 'from memory']);
    const etag = String(first.headers.etag);
    for (const [name, headers, notModified] of conditions(etag)) {
      expect((await app.inject({ url: '/scores', headers })).statusCode, name).toBe(notModified ? 304 : 200);
    }
  });
});
