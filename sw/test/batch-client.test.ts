/**
 * The worker's batch layer (sw/src/batch) against real HTTP servers on loopback: the real
 * origin batch route (origin/src/batch) for the normal cases, and a raw server that cuts,
 * stalls or damages a real batch for the failure cases. Cache Storage is replaced by an
 * in-memory store with the same interface (Node has none); the real one runs in the
 * Playwright tests (e2e/tests/batch-*.spec.ts).
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createServer, type Server } from 'node:http';
import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import Fastify, { type FastifyInstance } from 'fastify';
import fastifyStatic from '@fastify/static';
import {
  BATCH_MEDIA_TYPE,
  CACHE_DIGEST_HEADER,
  concatBytes,
  encodeBatchPreamble,
  encodeEndFrame,
  encodeManifestFrame,
  encodePartFrame,
  type BatchPart,
} from '@webpp/core';
import { registerBatching } from '../../origin/src/batch/index.js';
import { BatchClient, type BatchIO, type NavigationIO } from '../src/batch/index.js';
import { memoryKeyValueStore } from '../src/storage.js';
import { MemoryCache } from './support/memory-cache.js';

const IMAGE_COUNT = 30;
const imageBytes = (i: number, version = 1): Buffer => Buffer.alloc(1500 + i, (i * 3 + version) & 0xff);
const pageHtml = Array.from({ length: IMAGE_COUNT }, (_, i) => `<img src="/img/${i}.png">`).join('\n');

let root: string;
beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'webpp-sw-batch-'));
  await mkdir(join(root, 'img'));
  await writeFile(join(root, 'index.html'), `<!doctype html><title>batch</title>${pageHtml}`);
  await Promise.all(Array.from({ length: IMAGE_COUNT }, (_, i) => writeFile(join(root, 'img', `${i}.png`), imageBytes(i))));
});
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

const closers: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  await Promise.all(closers.splice(0).map((close) => close()));
});

/** The real origin batch route over a static folder. Counts requests that reach it over HTTP. */
async function startOrigin(options: { batching?: boolean; cacheControl?: string } = {}): Promise<{ base: string; requests: string[]; app: FastifyInstance }> {
  const app = Fastify({ logger: false, forceCloseConnections: true });
  await app.register(fastifyStatic, { root, ...(options.cacheControl ? { cacheControl: false } : {}) });
  if (options.cacheControl) {
    app.addHook('onSend', async (_request, reply, payload) => {
      reply.header('cache-control', options.cacheControl);
      return payload;
    });
  }
  let base = '';
  if (options.batching !== false) {
    registerBatching(app, {
      pageUrl: (request) => new URL(request.url, base).href,
      localPathOf: (url) => new URL(url).pathname,
    });
  }
  const requests: string[] = [];
  app.server.on('request', (request: { method?: string; url?: string; headers: Record<string, unknown> }) => {
    requests.push(`${request.method} ${request.url}${request.headers['if-none-match'] ? ' (conditional)' : ''}`);
  });
  await app.listen({ port: 0, host: '127.0.0.1' });
  base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
  closers.push(() => app.close());
  return { base, requests, app };
}

/** A raw server answering the page with `respond` and images with their bytes. */
async function startRawServer(respond: (base: string, response: import('node:http').ServerResponse) => void): Promise<{ base: string; requests: string[] }> {
  const requests: string[] = [];
  let base = '';
  const server: Server = createServer((request, response) => {
    requests.push(`${request.method} ${request.url}`);
    const image = /^\/img\/(\d+)\.png$/.exec(request.url ?? '');
    if (image) {
      response.writeHead(200, { 'content-type': 'image/png', etag: `"img-${image[1]}"`, 'cache-control': 'max-age=3600' });
      response.end(imageBytes(Number(image[1])));
      return;
    }
    respond(base, response);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  closers.push(
    () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  );
  return { base, requests };
}

/** A real batch of the page and its 30 images; `pageEnd` is where the page's frame ends. */
function realBatch(base: string): { wire: Uint8Array; pageEnd: number } {
  const page: BatchPart = { url: `${base}/index.html`, status: 200, headers: [['content-type', 'text/html']], body: new TextEncoder().encode(pageHtml) };
  const images: BatchPart[] = Array.from({ length: IMAGE_COUNT }, (_, i) => ({
    url: `${base}/img/${i}.png`,
    status: 200,
    headers: [
      ['content-type', 'image/png'],
      ['etag', `"img-${i}"`],
      ['cache-control', 'max-age=3600'],
    ],
    validator: `"img-${i}"`,
    body: imageBytes(i),
  }));
  const head = concatBytes([
    encodeBatchPreamble(),
    ...encodeManifestFrame({ page: page.url, parts: images.map((part) => part.url), cached: [] }),
    ...encodePartFrame(page, page.body),
  ]);
  const rest = images.flatMap((image) => encodePartFrame(image, image.body));
  const wire = concatBytes([head, ...rest, ...encodeEndFrame({ sentParts: IMAGE_COUNT + 1, missing: [] })]);
  return { wire, pageEnd: head.length };
}

interface Harness {
  client: BatchClient;
  cache: MemoryCache;
  io: BatchIO;
  /** Requests the worker sent through its normal (network) path. */
  network: Request[];
  pending: Promise<unknown>[];
  settle(): Promise<void>;
}

function harness(options: ConstructorParameters<typeof BatchClient>[0] = {}): Harness {
  const cache = new MemoryCache();
  const client = new BatchClient({ openCache: async () => cache, storage: memoryKeyValueStore(), flushDelayMs: 0, ...options });
  const network: Request[] = [];
  const pending: Promise<unknown>[] = [];
  const io: BatchIO = {
    network: (request) => {
      network.push(request);
      return fetch(request);
    },
    waitUntil: (promise) => void pending.push(promise),
  };
  return {
    client,
    cache,
    io,
    network,
    pending,
    async settle() {
      while (pending.length > 0) await Promise.allSettled(pending.splice(0));
    },
  };
}

const navigation = (url: string): Request => new Request(url, { headers: { accept: 'text/html' } });
const imageRequest = (base: string, i: number): Request => new Request(`${base}/img/${i}.png`);
/**
 * The navigation IO of a harness: the page request goes out as the worker's normal path
 * would send it (with the batch decoration when asked); `fallback` answers the plain,
 * undecorated second attempt.
 */
function navIO(h: Harness, url: string, fallback?: () => Promise<Response>): NavigationIO {
  return {
    respond: async (decorate) => {
      if (!decorate) {
        if (fallback) return fallback();
        throw new Error('unexpected fallback');
      }
      return h.io.network(decorate(navigation(url)));
    },
    waitUntil: h.io.waitUntil.bind(h.io),
  };
}

async function bodyOf(response: Response): Promise<Buffer> {
  return Buffer.from(await response.arrayBuffer());
}

describe('batch navigation and the logical-URL cache', () => {
  it('loads a 30-image page with one request, every image from the batch', async () => {
    const origin = await startOrigin();
    const h = harness();
    const page = await h.client.navigate(navigation(`${origin.base}/index.html`), navIO(h, `${origin.base}/index.html`));
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
    expect(await page.text()).toContain('<img src="/img/29.png">');
    const images = await Promise.all(Array.from({ length: IMAGE_COUNT }, (_, i) => h.client.serve(imageRequest(origin.base, i), h.io)));
    for (let i = 0; i < IMAGE_COUNT; i++) expect((await bodyOf(images[i]!)).equals(imageBytes(i))).toBe(true);
    await h.settle();
    expect(origin.requests).toEqual(['GET /index.html']);
    expect(h.network.map((request) => request.headers.get('accept'))).toEqual([expect.stringContaining(BATCH_MEDIA_TYPE)]);
    expect(h.client.cache.size).toBe(IMAGE_COUNT);
    expect(h.client.counters).toMatchObject({ batched: 1, servedFromBatch: IMAGE_COUNT, partFallbacks: 0 });
  });

  it('sends a digest on the next visit and gets only what changed or is missing', async () => {
    const origin = await startOrigin();
    const h = harness();
    await (await h.client.navigate(navigation(`${origin.base}/index.html`), navIO(h, `${origin.base}/index.html`))).text();
    await h.settle();
    await h.client.cache.remove(`${origin.base}/img/4.png`);
    await writeFile(join(root, 'img', '9.png'), imageBytes(9, 2));
    try {
      origin.requests.length = 0;
      h.network.length = 0;
      await (await h.client.navigate(navigation(`${origin.base}/index.html`), navIO(h, `${origin.base}/index.html`))).text();
      expect(h.network[0]?.headers.get(CACHE_DIGEST_HEADER)).toBeTruthy();
      const images = await Promise.all(Array.from({ length: IMAGE_COUNT }, (_, i) => h.client.serve(imageRequest(origin.base, i), h.io)));
      await h.settle();
      expect((await bodyOf(images[9]!)).equals(imageBytes(9, 2))).toBe(true);
      expect((await bodyOf(images[4]!)).equals(imageBytes(4))).toBe(true);
      expect((await bodyOf(images[0]!)).equals(imageBytes(0))).toBe(true);
      expect(origin.requests).toEqual(['GET /index.html']);
      expect(h.client.snapshot().lastSession).toMatchObject({ received: 2, confirmed: IMAGE_COUNT - 2, fallbacks: 0 });
      expect(h.client.counters).toMatchObject({ servedFromBatch: 2, servedFromCache: IMAGE_COUNT - 2 });
    } finally {
      await writeFile(join(root, 'img', '9.png'), imageBytes(9));
    }
  });

  it('answers a request that arrives before its part has streamed in, without a second fetch', async () => {
    let release: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const server = await startRawServer((base, response) => {
      const { wire, pageEnd } = realBatch(base);
      response.writeHead(200, { 'content-type': BATCH_MEDIA_TYPE });
      // Manifest and page now, the images once the gate opens.
      response.write(wire.subarray(0, pageEnd));
      void gate.then(() => response.end(wire.subarray(pageEnd)));
    });
    const h = harness();
    const page = await h.client.navigate(navigation(`${server.base}/index.html`), navIO(h, `${server.base}/index.html`));
    expect(await page.text()).toContain('<img');
    const early = h.client.serve(imageRequest(server.base, 7), h.io);
    expect(h.client.claim(imageRequest(server.base, 7))).toBe('resource');
    release();
    expect((await bodyOf(await early)).equals(imageBytes(7))).toBe(true);
    await h.settle();
    expect(server.requests).toEqual(['GET /index.html']);
  });

  it('completes the page when the batch is cut off halfway: the rest is fetched individually', async () => {
    const server = await startRawServer((base, response) => {
      const { wire } = realBatch(base);
      response.writeHead(200, { 'content-type': BATCH_MEDIA_TYPE });
      response.write(wire.subarray(0, Math.floor(wire.length / 2)), () => response.destroy());
    });
    const h = harness();
    const page = await h.client.navigate(navigation(`${server.base}/index.html`), navIO(h, `${server.base}/index.html`));
    expect(await page.text()).toContain('<img src="/img/0.png">');
    const images = await Promise.all(Array.from({ length: IMAGE_COUNT }, (_, i) => h.client.serve(imageRequest(server.base, i), h.io)));
    for (let i = 0; i < IMAGE_COUNT; i++) expect((await bodyOf(images[i]!)).equals(imageBytes(i))).toBe(true);
    await h.settle();
    const fetchedIndividually = server.requests.filter((line) => line.startsWith('GET /img/')).length;
    expect(fetchedIndividually).toBeGreaterThan(5);
    expect(fetchedIndividually).toBeLessThan(IMAGE_COUNT);
    expect(h.client.snapshot().lastSession?.failure).toMatch(/TRUNCATED|ended|terminated|closed|failed/i);
    // Everything is in the logical cache now, whichever way it came.
    expect(h.client.cache.size).toBe(IMAGE_COUNT);
  });

  it('never lets a request hang on a stalled stream: the idle timeout sends it to the network', async () => {
    const server = await startRawServer((base, response) => {
      const { wire } = realBatch(base);
      response.writeHead(200, { 'content-type': BATCH_MEDIA_TYPE });
      response.write(wire.subarray(0, Math.floor(wire.length / 3))); // and then silence, connection open
    });
    const h = harness({ idleTimeoutMs: 300 });
    await (await h.client.navigate(navigation(`${server.base}/index.html`), navIO(h, `${server.base}/index.html`))).text();
    const images = await Promise.all(Array.from({ length: IMAGE_COUNT }, (_, i) => h.client.serve(imageRequest(server.base, i), h.io)));
    for (let i = 0; i < IMAGE_COUNT; i++) expect((await bodyOf(images[i]!)).equals(imageBytes(i))).toBe(true);
    await h.settle();
    expect(h.client.snapshot().lastSession?.failure).toMatch(/no data for 300 ms/);
  });

  it('bounds how long one request waits for its part, even if the stream stays alive', async () => {
    let timer: ReturnType<typeof setInterval> | undefined;
    const server = await startRawServer((base, response) => {
      const { wire, pageEnd } = realBatch(base);
      response.writeHead(200, { 'content-type': BATCH_MEDIA_TYPE });
      // Manifest and page, then one byte at a time: never idle, never done.
      response.write(wire.subarray(0, pageEnd));
      let offset = pageEnd;
      timer = setInterval(() => {
        if (offset < wire.length && !response.destroyed) response.write(wire.subarray(offset, ++offset));
      }, 20);
    });
    closers.push(async () => clearInterval(timer));
    const h = harness({ pendingTimeoutMs: 300, idleTimeoutMs: 10_000 });
    await (await h.client.navigate(navigation(`${server.base}/index.html`), navIO(h, `${server.base}/index.html`))).text();
    const image = await h.client.serve(imageRequest(server.base, 29), h.io);
    expect((await bodyOf(image)).equals(imageBytes(29))).toBe(true);
    expect(h.client.counters.partFallbacks).toBe(1);
    expect(server.requests).toContain('GET /img/29.png');
  });

  it('refetches a corrupt part individually, and serves the intact ones from the batch', async () => {
    const server = await startRawServer((base, response) => {
      const wire = realBatch(base).wire.slice();
      // Damage a byte in the middle of the last image's body.
      wire[wire.length - 200] = wire[wire.length - 200]! ^ 0x5a;
      response.writeHead(200, { 'content-type': BATCH_MEDIA_TYPE });
      response.end(wire);
    });
    const h = harness();
    await (await h.client.navigate(navigation(`${server.base}/index.html`), navIO(h, `${server.base}/index.html`))).text();
    const images = await Promise.all(Array.from({ length: IMAGE_COUNT }, (_, i) => h.client.serve(imageRequest(server.base, i), h.io)));
    for (let i = 0; i < IMAGE_COUNT; i++) expect((await bodyOf(images[i]!)).equals(imageBytes(i))).toBe(true);
    await h.settle();
    expect(server.requests.filter((line) => line.startsWith('GET /img/'))).toEqual(['GET /img/29.png']);
  });

  it('falls back to the normal navigation when the page itself does not arrive', async () => {
    const server = await startRawServer((base, response) => {
      const { wire } = realBatch(base);
      response.writeHead(200, { 'content-type': BATCH_MEDIA_TYPE });
      response.write(wire.subarray(0, 40), () => response.destroy());
    });
    const h = harness();
    let fallbacks = 0;
    const page = await h.client.navigate(
      navigation(`${server.base}/index.html`),
      navIO(h, `${server.base}/index.html`, async () => {
        fallbacks += 1;
        return new Response('the normal page', { headers: { 'content-type': 'text/html' } });
      }),
    );
    expect(await page.text()).toBe('the normal page');
    expect(fallbacks).toBe(1);
    // Nothing was announced, so nothing waits.
    expect(h.client.pending.size).toBe(0);
  });

  it('does not trust a digest false positive: a copy the manifest does not confirm is revalidated', async () => {
    const server = await startRawServer((base, response) => {
      const page: BatchPart = { url: `${base}/index.html`, status: 200, headers: [['content-type', 'text/html']], body: new TextEncoder().encode('<img src="/img/3.png">') };
      // The server left img/3 out "because the digest listed it", but holds another version.
      const wire = concatBytes([
        encodeBatchPreamble(),
        ...encodeManifestFrame({ page: page.url, parts: [], cached: [[`${base}/img/3.png`, '"img-3"']] }),
        ...encodePartFrame(page, page.body),
        ...encodeEndFrame({ sentParts: 1, missing: [] }),
      ]);
      response.writeHead(200, { 'content-type': BATCH_MEDIA_TYPE });
      response.end(wire);
    });
    const h = harness();
    const stale = new Uint8Array([1, 2, 3]);
    await h.client.cache.store(`${server.base}/img/3.png`, 200, new Headers({ etag: '"old"', 'cache-control': 'max-age=3600' }), stale);
    await (await h.client.navigate(navigation(`${server.base}/index.html`), navIO(h, `${server.base}/index.html`))).text();
    await h.settle();
    expect(h.client.snapshot().lastSession).toMatchObject({ confirmed: 0, unconfirmed: 1 });
    const image = await h.client.serve(imageRequest(server.base, 3), h.io);
    expect((await bodyOf(image)).equals(imageBytes(3))).toBe(true);
    expect(server.requests).toContain('GET /img/3.png');
    expect(h.network.at(-1)?.headers.get('if-none-match')).toBe('"old"');
  });

  it('bounds the wait for the page itself when the server trickles it', async () => {
    let timer: ReturnType<typeof setInterval> | undefined;
    const server = await startRawServer((base, response) => {
      const { wire } = realBatch(base);
      response.writeHead(200, { 'content-type': BATCH_MEDIA_TYPE });
      let offset = 0;
      timer = setInterval(() => {
        if (offset < wire.length && !response.destroyed) response.write(wire.subarray(offset, ++offset));
      }, 10);
    });
    closers.push(async () => clearInterval(timer));
    const h = harness({ pageTimeoutMs: 300 });
    const page = await h.client.navigate(navigation(`${server.base}/index.html`), navIO(h, `${server.base}/index.html`, async () => new Response('normal page')));
    expect(await page.text()).toBe('normal page');
    expect(h.client.counters.pageFallbacks).toBe(1);
  });

  it('uses the plain page of an origin without batching, and stops sending it digests', async () => {
    const origin = await startOrigin({ batching: false });
    const h = harness();
    await h.client.cache.store(`${origin.base}/img/0.png`, 200, new Headers({ etag: '"x"', 'cache-control': 'max-age=60' }), new Uint8Array(3));
    const page = await h.client.navigate(navigation(`${origin.base}/index.html`), navIO(h, `${origin.base}/index.html`));
    expect(await page.text()).toContain('<img');
    expect(h.network[0]?.headers.get(CACHE_DIGEST_HEADER)).toBeTruthy();
    expect(h.client.counters.unsupported).toBe(1);
    await (await h.client.navigate(navigation(`${origin.base}/index.html`), navIO(h, `${origin.base}/index.html`))).text();
    expect(h.network[1]?.headers.get(CACHE_DIGEST_HEADER)).toBeNull();
    // Resources it does not hold pass through the normal path untouched.
    expect(h.client.claim(imageRequest(origin.base, 5))).toBeUndefined();
  });

  it('revalidates a stale entry with its validator and serves the stored copy on 304', async () => {
    const origin = await startOrigin({ cacheControl: 'max-age=0' });
    let nowMs = 1_000_000;
    const h = harness({ now: () => nowMs, validatedWindowMs: 1000 });
    await (await h.client.navigate(navigation(`${origin.base}/index.html`), navIO(h, `${origin.base}/index.html`))).text();
    await Promise.all(Array.from({ length: IMAGE_COUNT }, (_, i) => h.client.serve(imageRequest(origin.base, i), h.io)));
    await h.settle();
    nowMs += 5_000;
    origin.requests.length = 0;
    const image = await h.client.serve(imageRequest(origin.base, 3), h.io);
    expect((await bodyOf(image)).equals(imageBytes(3))).toBe(true);
    expect(origin.requests).toEqual(['GET /img/3.png (conditional)']);
    expect(h.client.counters).toMatchObject({ revalidations: 1, notModified: 1 });
  });

  it('refetches when the bindings announce a new validator, even while fresh', async () => {
    const origin = await startOrigin({ cacheControl: 'max-age=3600' });
    const h = harness();
    await (await h.client.navigate(navigation(`${origin.base}/index.html`), navIO(h, `${origin.base}/index.html`))).text();
    await Promise.all(Array.from({ length: IMAGE_COUNT }, (_, i) => h.client.serve(imageRequest(origin.base, i), h.io)));
    await h.settle();
    await writeFile(join(root, 'img', '2.png'), imageBytes(2, 3));
    try {
      const fresh = await h.client.serve(imageRequest(origin.base, 2), h.io);
      expect((await bodyOf(fresh)).equals(imageBytes(2))).toBe(true); // fresh, and nobody said otherwise
      const io: BatchIO = { ...h.io, boundValidator: (url) => (url.endsWith('/img/2.png') ? '"sha256-new"' : undefined) };
      const changed = await h.client.serve(imageRequest(origin.base, 2), io);
      expect((await bodyOf(changed)).equals(imageBytes(2, 3))).toBe(true);
      await h.settle();
      const again = await h.client.serve(imageRequest(origin.base, 2), h.io);
      expect((await bodyOf(again)).equals(imageBytes(2, 3))).toBe(true);
    } finally {
      await writeFile(join(root, 'img', '2.png'), imageBytes(2));
    }
  });

  it('does not keep responses that forbid storing, and evicts the least recently used beyond its bounds', async () => {
    let tick = 0;
    const h = harness({ maxCacheBytes: 5000, now: () => ++tick });
    const url = (i: number): string => `http://127.0.0.1:9/r${i}`;
    expect(await h.client.cache.store(url(0), 200, new Headers({ 'cache-control': 'no-store' }), new Uint8Array(10))).toBe(false);
    expect(await h.client.cache.store(url(0), 200, new Headers({ vary: 'cookie' }), new Uint8Array(10))).toBe(false);
    for (let i = 1; i <= 4; i++) {
      expect(await h.client.cache.store(url(i), 200, new Headers({ etag: `"${i}"`, 'cache-control': 'max-age=60' }), new Uint8Array(1500))).toBe(true);
      if (i === 2) await h.client.cache.read(url(1)); // 1 used after 2 was stored
    }
    // 4 x 1500 > 5000: the least recently used (2) went.
    expect([1, 2, 3, 4].map((i) => h.client.cache.has(url(i)))).toEqual([true, false, true, true]);
    expect(h.cache.entries.has(url(2))).toBe(false);
  });

  it('keeps the logical cache across a worker restart (index in IndexedDB, bodies in Cache Storage)', async () => {
    const cache = new MemoryCache();
    const storage = memoryKeyValueStore();
    const first = new BatchClient({ openCache: async () => cache, storage, flushDelayMs: 0 });
    await first.cache.store('http://127.0.0.1:9/a', 200, new Headers({ etag: '"a"', 'cache-control': 'max-age=60' }), new Uint8Array(5));
    await first.cache.flush();
    cache.entries.set('http://127.0.0.1:9/orphan', { status: 200, headers: [], body: new Uint8Array(1) });
    const second = new BatchClient({ openCache: async () => cache, storage, flushDelayMs: 0 });
    await second.cache.ready;
    expect(second.cache.has('http://127.0.0.1:9/a')).toBe(true);
    expect(second.cache.decide('http://127.0.0.1:9/a')).toEqual({ kind: 'fresh' });
    expect(cache.entries.has('http://127.0.0.1:9/orphan')).toBe(false);
  });
});
