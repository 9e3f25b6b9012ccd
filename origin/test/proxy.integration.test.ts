/**
 * Proxy mode (the paper's "server-side proxy" configuration, Section 5): webpp in front of
 * an existing web server that knows nothing about it, over real loopback sockets.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { gzipSync } from 'node:zlib';
import Fastify, { type FastifyInstance } from 'fastify';
import { startReplicaServer, type ReplicaServer } from '../src/server.js';
import { ADMIN_TOKEN, auth, bindingMap, removeTempDirs } from './helpers.js';

let upstream: FastifyInstance;
let upstreamUrl: string;
let proxy: ReplicaServer;
const upstreamHits: string[] = [];
const PAGE = '<!doctype html><html><head><link rel="stylesheet" href="/css/site.css"></head><body><img src="/images/logo.png"></body></html>';

beforeAll(async () => {
  upstream = Fastify();
  upstream.addHook('onRequest', async (request) => {
    upstreamHits.push(`${request.method} ${request.url} ${request.headers['accept-encoding'] ?? ''}`);
  });
  upstream.get('/page', async (request, reply) => {
    reply.type('text/html; charset=utf-8').header('etag', '"page-v1"');
    // Like many servers, compress when the client allows it.
    if (String(request.headers['accept-encoding'] ?? '').includes('gzip')) return reply.header('content-encoding', 'gzip').send(gzipSync(PAGE));
    return PAGE;
  });
  upstream.get('/css/site.css', async (_request, reply) => reply.type('text/css').send('body { background: url(../images/bg.png) }'));
  upstream.get('/images/logo.png', async (_request, reply) => reply.type('image/png').send(Buffer.from([1, 2, 3])));
  upstream.post('/api/echo', async (request) => ({ echoed: request.body }));
  upstreamUrl = await upstream.listen({ port: 0, host: '127.0.0.1' });

  proxy = await startReplicaServer({
    proxyUpstream: upstreamUrl,
    publicHost: 'a.localhost',
    adminToken: ADMIN_TOKEN,
    directory: {
      formatVersion: 1,
      entries: [
        { logical: '/images/*', servers: ['http://b.localhost:8082'] },
        { logical: '/css/site.css', servers: ['http://c.localhost:8083'] },
      ],
    },
  });
});

afterAll(async () => {
  await proxy?.close();
  await upstream?.close();
  await removeTempDirs();
});

describe('proxy mode', () => {
  it('pre-processes upstream HTML (asking for it uncompressed) and injects the script', async () => {
    const response = await fetch(`http://127.0.0.1:${proxy.port}/page`, { headers: { 'accept-encoding': 'gzip, br' } });
    expect(response.status).toBe(200);
    const body = await response.text();
    expect(body).toBe(PAGE.replace('<head>', '<head><script src="/webpp.js" async></script>'));
    expect(bindingMap(response.headers.get('webpp-bindings') ?? undefined)).toEqual({
      [`${proxy.url}/images/*`]: ['http://b.localhost:8082/images/'],
      [`${proxy.url}/css/site.css`]: ['http://c.localhost:8083/css/site.css'],
    });
    expect(upstreamHits.filter((hit) => hit.startsWith('GET /page')).every((hit) => hit.endsWith('identity'))).toBe(true);
  });

  it('serves repeated pages from the pre-processing cache (upstream ETag as validator)', async () => {
    const missesBefore = proxy.app.webpp.preprocessCache.misses;
    const first = await fetch(`http://127.0.0.1:${proxy.port}/page`);
    const second = await fetch(`http://127.0.0.1:${proxy.port}/page`);
    expect(await second.text()).toBe(await first.text());
    expect(proxy.app.webpp.preprocessCache.misses).toBe(missesBefore);
  });

  it('binds proxied style sheets and replicated resources, with CORS', async () => {
    const css = await fetch(`http://127.0.0.1:${proxy.port}/css/site.css`);
    expect(Object.keys(bindingMap(css.headers.get('webpp-bindings') ?? undefined))).toEqual([`${proxy.url}/css/site.css`, `${proxy.url}/images/*`]);
    const logo = await fetch(`http://127.0.0.1:${proxy.port}/images/logo.png`);
    expect(new Uint8Array(await logo.arrayBuffer())).toEqual(new Uint8Array([1, 2, 3]));
    expect(logo.headers.get('webpp-bindings')).not.toBeNull();
  });

  it('passes other methods through, and serves replicas it stores itself', async () => {
    const echo = await fetch(`http://127.0.0.1:${proxy.port}/api/echo`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"x":1}' });
    expect(await echo.json()).toEqual({ echoed: { x: 1 } });
    const created = await fetch(`http://127.0.0.1:${proxy.port}/.well-known/webpp/replicas/images/logo.png`, { method: 'POST', headers: { ...auth, 'content-type': 'image/png' }, body: new Uint8Array([9, 9]) });
    expect(created.status).toBe(201);
    const hitsBefore = upstreamHits.length;
    const logo = await fetch(`http://127.0.0.1:${proxy.port}/images/logo.png`);
    expect(new Uint8Array(await logo.arrayBuffer())).toEqual(new Uint8Array([9, 9]));
    expect(upstreamHits.length).toBe(hitsBefore);
    expect(bindingMap(logo.headers.get('webpp-bindings') ?? undefined)[`${proxy.url}/images/logo.png`]).toEqual([`${proxy.url}/images/logo.png`]);
  });
});
