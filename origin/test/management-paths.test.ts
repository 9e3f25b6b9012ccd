/**
 * Issue 10 §3, origin side: a management or peer path with a query or a fragment is 400
 * (never silently stored under the path without it); the paths the origin serves itself
 * (webpp.js, webpp-sw.js, their source maps, /.well-known/webpp/*) cannot become replicas
 * or directory entries; stored replicas are served with `X-Content-Type-Options: nosniff`.
 */
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { request as httpRequest } from 'node:http';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { startReplicaServer, type ReplicaServer } from '../src/server.js';
import { signClusterRequest } from '../src/http/auth.js';
import { LOGICAL_URL_HEADER, PEER_REPLICAS_PATH } from '../src/replicas/replica-protocol.js';
import { REPLICA_VERSION_HEADER } from '../src/replicas/replica-version.js';
import { ADMIN_TOKEN, CLUSTER_SECRET, ORIGIN_A, auth, buildApp, removeTempDirs, tempDir } from './helpers.js';

const R = '/.well-known/webpp/replicas';
let app: FastifyInstance | undefined;
let server: ReplicaServer | undefined;
afterEach(async () => {
  await app?.close();
  await server?.close();
  app = undefined;
  server = undefined;
});
afterAll(removeTempDirs);

/** Sends the path exactly as given over a real socket; resolves with status and error code. */
function rawRequest(port: number, method: string, path: string, headers: Record<string, string>, body: string): Promise<{ status: number; code: string | undefined }> {
  return new Promise((resolve, reject) => {
    const request = httpRequest({ host: '127.0.0.1', port, method, path, headers: { ...headers, 'content-length': String(Buffer.byteLength(body)) } }, (response) => {
      let text = '';
      response.on('data', (chunk: Buffer) => (text += chunk.toString()));
      response.on('end', () => {
        let code: string | undefined;
        try {
          code = (JSON.parse(text) as { code?: string }).code;
        } catch {
          code = undefined;
        }
        resolve({ status: response.statusCode ?? 0, code });
      });
    });
    request.on('error', reject);
    request.end(body);
  });
}

async function state(instance: FastifyInstance): Promise<string> {
  const listing = await instance.inject({ url: R, headers: auth });
  return JSON.stringify([instance.webpp.directory.toJSON(), listing.json()]);
}

describe('management and peer paths with a query or a fragment', () => {
  it('answers 400 WEBPP_ERR_BAD_PATH to every management method and stores nothing', async () => {
    server = await startReplicaServer({ adminToken: ADMIN_TOKEN, injectScript: false });
    const before = await state(server.app);
    for (const path of ['/x?y=1', '/x?', '/dir/page.html?v=2#top', '/x#frag', '/x?a=1&b=2']) {
      for (const method of ['POST', 'PUT', 'DELETE', 'GET']) {
        const answer = await rawRequest(server.port, method, `${R}${path}`, { ...auth, 'content-type': 'text/plain' }, method === 'POST' || method === 'PUT' ? 'content' : '');
        expect({ method, path, ...answer }).toEqual({ method, path, status: 400, code: 'WEBPP_ERR_BAD_PATH' });
      }
    }
    expect(await state(server.app)).toBe(before);
    expect((await fetch(`${server.url}/x`)).status).toBe(404);
    // Without the query the same call works.
    expect((await rawRequest(server.port, 'POST', `${R}/x`, auth, 'content')).status).toBe(201);
  });

  it('answers 400 to a correctly signed peer push whose path has a query', async () => {
    server = await startReplicaServer({ adminToken: ADMIN_TOKEN, clusterSecret: CLUSTER_SECRET, injectScript: false });
    const url = `${PEER_REPLICAS_PATH}/x?y=1`;
    const body = 'pushed';
    const headers = { 'content-type': 'text/plain', [REPLICA_VERSION_HEADER]: `${Date.now()}@${server.url}`, [LOGICAL_URL_HEADER]: `${server.url}/x` };
    const answer = await rawRequest(server.port, 'PUT', url, {
      ...headers,
      'webpp-cluster-auth': signClusterRequest(CLUSTER_SECRET, 'PUT', `${server.url}${url}`, Buffer.from(body), { headers }),
    }, body);
    expect(answer).toEqual({ status: 400, code: 'WEBPP_ERR_BAD_PATH' });
    expect(server.app.webpp.store.size).toBe(0);
  });
});

describe('paths the origin serves itself are reserved', () => {
  it('refuses replicas at the client scripts, their source maps and /.well-known/webpp/*', async () => {
    app = await buildApp({ scriptPath: '/js/webpp.js' });
    const before = await state(app);
    for (const path of ['/js/webpp.js', '/js/webpp.js.map', '/webpp-sw.js', '/webpp-sw.js.map', '/.well-known/webpp/health', '/.well-known/webpp/anything']) {
      const response = await app.inject({ method: 'POST', url: `${R}${path}`, headers: auth, payload: 'x' });
      expect({ path, status: response.statusCode, code: response.json().code }).toEqual({ path, status: 400, code: 'WEBPP_ERR_BAD_PATH' });
    }
    expect(await state(app)).toBe(before);
    // Neighbours of reserved paths are ordinary paths.
    for (const path of ['/webpp.js.map', '/js/webpp.jsx', '/.well-known/other']) {
      const response = await app.inject({ method: 'POST', url: `${R}${path}`, headers: auth, payload: 'x' });
      expect({ path, status: response.statusCode }).toEqual({ path, status: 201 });
    }
  });

  it('refuses directory edits that bind a reserved path, and accepts a "/*" prefix that covers one', async () => {
    app = await buildApp();
    const before = await state(app);
    for (const entry of [
      { logical: '/webpp.js.map', servers: [ORIGIN_A] },
      { logical: '/webpp-sw.js', servers: [ORIGIN_A] },
      { logical: '/app.js', physical: [`${ORIGIN_A}/webpp.js`] },
      { logical: '/.well-known/webpp/*', servers: [ORIGIN_A] },
    ]) {
      const response = await app.inject({ method: 'POST', url: '/.well-known/webpp/directory', headers: auth, payload: { add: [entry] } });
      expect({ entry, status: response.statusCode, code: response.json().code }).toEqual({ entry, status: 400, code: 'WEBPP_ERR_BAD_PATH' });
    }
    expect(await state(app)).toBe(before);
    const prefix = await app.inject({ method: 'POST', url: '/.well-known/webpp/directory', headers: auth, payload: { add: [{ logical: '/*', servers: [ORIGIN_A] }] } });
    expect(prefix.statusCode).toBe(200);
  });

  it('refuses to start with a directory file that binds a reserved path', async () => {
    const file = join(await tempDir(), 'directory.json');
    await writeFile(file, JSON.stringify({ formatVersion: 1, entries: [{ logical: '/webpp.js.map', servers: [ORIGIN_A] }] }));
    await expect(buildApp({ directoryFile: file })).rejects.toMatchObject({ code: 'WEBPP_ERR_DIRECTORY_FILE', message: expect.stringContaining('webpp.js.map') });
    await expect(buildApp({ directory: { formatVersion: 1, entries: [{ logical: '/ok.js', physical: [`${ORIGIN_A}/.well-known/webpp/health`] }] } })).rejects.toMatchObject({
      code: 'WEBPP_ERR_DIRECTORY_FILE',
    });
  });
});

describe('stored replicas', () => {
  it('are served with X-Content-Type-Options: nosniff (GET, HEAD, ranges, 304)', async () => {
    app = await buildApp();
    await app.inject({ method: 'POST', url: `${R}/upload.txt`, headers: { ...auth, 'content-type': 'text/plain' }, payload: '<script>alert(1)</script>' });
    const get = await app.inject({ url: '/upload.txt' });
    expect(get.statusCode).toBe(200);
    expect(get.headers['x-content-type-options']).toBe('nosniff');
    const head = await app.inject({ method: 'HEAD', url: '/upload.txt' });
    expect(head.headers['x-content-type-options']).toBe('nosniff');
    const range = await app.inject({ url: '/upload.txt', headers: { range: 'bytes=0-3' } });
    expect([range.statusCode, range.headers['x-content-type-options']]).toEqual([206, 'nosniff']);
    const notModified = await app.inject({ url: '/upload.txt', headers: { 'if-none-match': String(get.headers.etag) } });
    expect([notModified.statusCode, notModified.headers['x-content-type-options']]).toEqual([304, 'nosniff']);
  });
});
