/**
 * Offline copies (stale-if-error) driven through the ReplicaClient as a fetch event drives
 * it, against three real Fastify servers on loopback that can answer, answer 5xx / 404, or
 * drop every connection (a server that is down). Cache Storage is an in-memory CacheLike
 * (Node has none); the real one is exercised in Chromium by e2e/tests/sw-offline.spec.ts.
 */
import type { AddressInfo } from 'node:net';
import Fastify from 'fastify';
import type { FastifyInstance } from 'fastify';
import { BINDINGS_HEADER, encodeBindings } from '@webpp/core';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { LogicalCache } from '../src/batch/logical-cache.js';
import type { WebppEvent } from '../src/messages.js';
import { OFFLINE_COPY_HEADER, createOfflineCopies } from '../src/offline-cache.js';
import { ReplicaClient } from '../src/replica-client.js';
import { memoryKeyValueStore } from '../src/storage.js';
import { eventIO } from './support/event-io.js';
import { MemoryCache } from './support/memory-cache.js';

type Mode = 'ok' | 'down' | '500' | '404';
interface Server {
  origin: string;
  app: FastifyInstance;
}

const PATHS = ['/page.html', '/a.txt', '/b.txt', '/c.txt', '/nostore.txt', '/private.txt', '/nocache.txt', '/must.txt', '/big.txt', '/cookie.txt'];
const HEADERS: Record<string, Record<string, string>> = {
  '/nostore.txt': { 'cache-control': 'no-store' },
  '/private.txt': { 'cache-control': 'private, max-age=60' },
  '/nocache.txt': { 'cache-control': 'no-cache' },
  '/must.txt': { 'cache-control': 'max-age=0, must-revalidate' },
  '/cookie.txt': { 'set-cookie': 'session=1' },
};
const servers: Server[] = [];
let primary: Server;
let mode: Mode = 'ok';
let version = 1;

async function start(): Promise<Server> {
  const app = Fastify({ forceCloseConnections: true });
  const server: Server = { origin: '', app };
  app.get('/*', async (request, reply) => {
    if (mode === 'down') {
      request.raw.socket.destroy(); // connection reset: the page's network error
      return reply.hijack();
    }
    reply.header(
      BINDINGS_HEADER,
      encodeBindings({
        directoryVersion: 1,
        bindings: PATHS.map((path) => ({ logical: `${primary.origin}${path}`, prefix: false, replicas: servers.map((s) => `${s.origin}${path}`) })),
      }).value,
    );
    if (mode === '500') return reply.code(500).send('broken');
    if (mode === '404') return reply.code(404).send('gone');
    const path = request.url.split('?')[0] as string;
    for (const [name, value] of Object.entries(HEADERS[path] ?? {})) reply.header(name, value);
    reply.header('access-control-allow-origin', '*').header('access-control-expose-headers', '*');
    const body = path === '/big.txt' ? 'x'.repeat(4_096) : `${path} v${version}`;
    return reply.header('content-type', 'text/plain').send(body);
  });
  await app.listen({ port: 0, host: '127.0.0.1' });
  server.origin = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
  servers.push(server);
  return server;
}

beforeAll(async () => {
  primary = await start();
  await start();
  await start();
});

afterAll(async () => {
  for (const server of servers) await server.app.close();
});

beforeEach(() => {
  mode = 'ok';
  version = 1;
});

async function client(settings: Record<string, number> = {}, offline = true, internal: Record<string, number> = {}) {
  const events: WebppEvent[] = [];
  const cache = new MemoryCache();
  const instance = new ReplicaClient({
    settings,
    internal: { flushDelayMs: 0, ...internal },
    selfOrigin: primary.origin,
    storage: memoryKeyValueStore(),
    observeResourceTiming: false,
    publish: (batch) => void events.push(...batch),
    unregister: async () => undefined,
    notifyPages: async () => undefined,
    openOfflineCache: async () => cache,
    ...(offline ? { offlineCopies: createOfflineCopies } : {}),
  });
  await instance.ready;
  // The first request is observed (no bindings yet) and teaches the bindings of every path.
  await get(instance, '/page.html');
  return { instance, events, cache };
}

/** One request as the page makes it; the body read whole (a network error gives status 0). */
async function get(instance: ReplicaClient, path: string, init: RequestInit = {}): Promise<{ status: number; text: string; copy: string | null }> {
  const io = eventIO();
  const response = await instance.respond(new Request(`${primary.origin}${path}`, init), io);
  const text = response.type === 'error' ? '' : await response.text();
  await io.settled();
  return { status: response.status, text, copy: response.headers.get(OFFLINE_COPY_HEADER) };
}

describe('offline copies (stale-if-error)', () => {
  it('serves a loaded resource when every replica is down, marked, counted and announced', async () => {
    const { instance, events } = await client();
    expect(instance.route(new Request(`${primary.origin}/a.txt`))).toBe('bind');
    expect(await get(instance, '/a.txt')).toEqual({ status: 200, text: '/a.txt v1', copy: null });
    mode = 'down';
    const before = Date.now();
    const offline = await get(instance, '/a.txt');
    expect(offline.status).toBe(200);
    expect(offline.text).toBe('/a.txt v1');
    expect(Date.parse(offline.copy ?? '')).toBeGreaterThan(before - 60_000);
    instance.reporter.flushEvents();
    const event = events.find((e) => e.type === 'offline-copy');
    expect(event).toMatchObject({ type: 'offline-copy', logicalUrl: `${primary.origin}/a.txt` });
    expect(instance.snapshot().offline).toMatchObject({ enabled: true, servedFromCache: 1 });
    expect(instance.snapshot().counters.offlineCopies).toBe(1);
    // Never loaded: nothing to serve, the page gets the network error it would get anyway.
    expect((await get(instance, '/b.txt')).status).toBe(0);
  });

  it('are opt-in: a client built without them keeps nothing and rescues nothing', async () => {
    // Without a copy to serve, every replica down is tried again after a backoff within the retry window (core's
    // retry rounds), here 2 s, before the page gets its network error; with copies the copy is served at once (above).
    const { instance, cache } = await client({}, false, { retryWindowMs: 2_000 });
    expect(await get(instance, '/a.txt')).toEqual({ status: 200, text: '/a.txt v1', copy: null });
    mode = 'down';
    expect((await get(instance, '/a.txt')).status).toBe(0);
    expect(instance.snapshot().offline).toMatchObject({ enabled: false, entries: 0, servedFromCache: 0 });
    expect(await cache.keys()).toEqual([]);
  });

  it('never serves a copy instead of a live answer', async () => {
    const { instance } = await client();
    await get(instance, '/a.txt');
    version = 2;
    expect(await get(instance, '/a.txt')).toEqual({ status: 200, text: '/a.txt v2', copy: null });
    mode = 'down';
    // The newest version seen is the one kept.
    expect((await get(instance, '/a.txt')).text).toBe('/a.txt v2');
    expect(instance.snapshot().offline.servedFromCache).toBe(1);
  });

  it('uses the copy on 5xx everywhere, but a 404 everywhere is the truth and deletes it', async () => {
    const { instance } = await client();
    await get(instance, '/a.txt');
    mode = '500';
    expect(await get(instance, '/a.txt')).toMatchObject({ status: 200, text: '/a.txt v1' });
    mode = '404';
    expect(await get(instance, '/a.txt')).toEqual({ status: 404, text: 'gone', copy: null });
    mode = 'down';
    expect((await get(instance, '/a.txt')).status).toBe(0);
  });

  it('does not keep what HTTP or privacy forbids, range requests, or bodies over the entry bound', async () => {
    const { instance } = await client({ offlineMaxEntryBytes: 1_024 });
    for (const path of ['/nostore.txt', '/must.txt', '/big.txt', '/cookie.txt']) expect((await get(instance, path)).status).toBe(200);
    // A private answer to a request that carries credentials (cookies) is personal.
    expect((await get(instance, '/private.txt', { credentials: 'include' })).status).toBe(200);
    // So is a no-cache answer to one ("Hello Alice", revalidated on every visit).
    expect((await get(instance, '/nocache.txt', { credentials: 'include' })).status).toBe(200);
    expect((await get(instance, '/b.txt', { headers: { range: 'bytes=0-3' } })).status).toBe(200);
    expect((await get(instance, '/c.txt', { headers: { authorization: 'Bearer x' } })).status).toBe(200);
    expect(instance.snapshot().offline.entries).toBe(1); // only /page.html
    mode = 'down';
    for (const path of ['/nostore.txt', '/must.txt', '/big.txt', '/cookie.txt', '/private.txt', '/nocache.txt', '/b.txt', '/c.txt']) {
      expect((await get(instance, path)).status, path).toBe(0);
    }
    expect((await get(instance, '/page.html')).text).toBe('/page.html v1');
  });

  it('is bounded in entries and bytes, least recently used evicted first', async () => {
    const { instance } = await client({}, true, { offlineMaxEntries: 2 });
    await get(instance, '/a.txt'); // evicts /page.html
    await get(instance, '/b.txt'); // page.html gone, a and b kept
    await get(instance, '/a.txt'); // a used again: b is now the least recently used
    await get(instance, '/c.txt'); // evicts b
    expect(instance.snapshot().offline.entries).toBe(2);
    mode = 'down';
    expect((await get(instance, '/a.txt')).text).toBe('/a.txt v1');
    expect((await get(instance, '/c.txt')).text).toBe('/c.txt v1');
    expect((await get(instance, '/b.txt')).status).toBe(0);
    expect((await get(instance, '/page.html')).status).toBe(0);

    mode = 'ok';
    const small = await client({ offlineMaxBytes: 20 }); // "/a.txt v1" is 9 bytes: two fit, with the page (13) they do not
    await get(small.instance, '/a.txt');
    await get(small.instance, '/b.txt');
    expect(small.instance.snapshot().offline.bytes).toBeLessThanOrEqual(20);
    expect(small.instance.snapshot().offline.entries).toBe(2);
    mode = 'down';
    expect((await get(small.instance, '/page.html')).status).toBe(0);
    expect((await get(small.instance, '/b.txt')).text).toBe('/b.txt v1');
  });

  it('does not serve a copy older than offlineMaxAgeMs, and can be turned off', async () => {
    const aged = await client({ offlineMaxAgeMs: 1 });
    await get(aged.instance, '/a.txt');
    await new Promise((resolve) => setTimeout(resolve, 20));
    mode = 'down';
    expect((await get(aged.instance, '/a.txt')).status).toBe(0);

    mode = 'ok';
    const off = await client({ offlineMaxBytes: 0 });
    await get(off.instance, '/a.txt');
    expect(off.instance.snapshot().offline).toMatchObject({ enabled: false, entries: 0 });
    expect(off.cache.entries.size).toBe(0);
  });

  it("serves the batch layer's parts offline only when their headers allow it, and forgets them on 404", async () => {
    const { instance } = await client();
    const batchCache = new LogicalCache({
      openCache: async () => new MemoryCache(),
      storage: memoryKeyValueStore(),
      maxBytes: 1_000_000,
      maxEntries: 100,
      validatedWindowMs: 0,
      digestMaxBytes: 0,
      digestFalsePositiveLog2: 1,
      flushDelayMs: 0,
      now: Date.now,
      indexKey: 'test-batch-index',
    });
    instance.offline.alsoFrom(batchCache);
    const part = (cacheControl: string) => new Headers({ 'content-type': 'text/plain', 'cache-control': cacheControl, etag: '"p"' });
    const text = (value: string) => new TextEncoder().encode(value);
    await batchCache.store(`${primary.origin}/b.txt`, 200, part('max-age=60'), text('b from a batch'));
    await batchCache.store(`${primary.origin}/c.txt`, 200, part('private, max-age=0, must-revalidate'), text('{"user":"alice"}'));
    mode = '404';
    await get(instance, '/a.txt'); // nothing held: nothing to forget
    mode = 'down';
    expect(await get(instance, '/b.txt')).toMatchObject({ status: 200, text: 'b from a batch' });
    // A personal part kept fresh by the batch layer is never shown stale.
    expect((await get(instance, '/c.txt')).status).toBe(0);
    // A resource that answered 404 since is forgotten by every cache offline copies come from.
    mode = '404';
    expect((await get(instance, '/b.txt')).status).toBe(404);
    mode = 'down';
    expect((await get(instance, '/b.txt')).status).toBe(0);
  });
});
