/**
 * Batch transmission on the origin (docs/batching.md), against real Fastify servers on
 * loopback and real HTTP: the batch is read back with the @webpp/core stream reader.
 */
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import Fastify, { type FastifyInstance } from 'fastify';
import fastifyStatic from '@fastify/static';
import {
  BATCH_ACCEPT,
  BATCH_MEDIA_TYPE,
  CACHE_DIGEST_HEADER,
  encodeCacheDigest,
  readBatch,
  type BatchFrame,
  type BatchManifest,
  type BatchPart,
} from '@webpp/core';
import { registerBatching, type BatchController, type BatchSource } from '../src/batch/index.js';
import type { ResourceReader } from '../src/batch/resource-reader.js';
import { removeTempDirs, tempDir } from './helpers.js';

afterAll(removeTempDirs);

const IMAGE_COUNT = 30;
const imageBytes = (i: number, version = 1): Buffer => Buffer.alloc(2000 + i * 10, (i * 7 + version) & 0xff);

async function siteRoot(): Promise<string> {
  const root = await tempDir('webpp-batch-site-');
  await mkdir(join(root, 'img'));
  const images = Array.from({ length: IMAGE_COUNT }, (_, i) => `<img src="/img/${i}.png" alt="${i}">`).join('\n');
  await writeFile(
    join(root, 'index.html'),
    `<!doctype html><html><head><link rel="stylesheet" href="style.css"><link rel="next" href="/other.html"></head>
<body><a href="/other.html">next</a>${images}<video src="/movie.mp4" poster="/img/0.png"></video>
<img src="/missing.png"><img src="http://elsewhere.localhost:9/x.png"></body></html>`,
  );
  await writeFile(join(root, 'style.css'), `body { color: #333; }\n${'.rule { margin: 0 auto; padding: 1px; }\n'.repeat(200)}`);
  await writeFile(join(root, 'other.html'), '<!doctype html><p>other');
  await writeFile(join(root, 'movie.mp4'), Buffer.alloc(100));
  await Promise.all(Array.from({ length: IMAGE_COUNT }, (_, i) => writeFile(join(root, 'img', `${i}.png`), imageBytes(i))));
  return root;
}

interface Site {
  app: FastifyInstance;
  base: string;
  root: string;
  batch: BatchController;
  /** Requests that reached the server over the network (not injected ones). */
  networkRequests: string[];
}

const sites: Site[] = [];
afterEach(async () => {
  await Promise.all(sites.splice(0).map((site) => site.app.close()));
});

async function startSite(
  options: Parameters<typeof registerBatching>[2] = {},
  sourceOverrides: Partial<BatchSource> = {},
): Promise<Site> {
  const root = await siteRoot();
  // forceCloseConnections: fetch may leave a fresh keep-alive socket behind after an abort.
  const app = Fastify({ logger: false, forceCloseConnections: true });
  await app.register(fastifyStatic, { root });
  let base = '';
  const source: BatchSource = {
    pageUrl: (request) => new URL(request.url, base).href,
    localPathOf: (url) => (new URL(url).origin === new URL(base).origin ? new URL(url).pathname : undefined),
    ...sourceOverrides,
  };
  const batch = registerBatching(app, source, options);
  const networkRequests: string[] = [];
  app.server.on('request', (request: { url?: string }) => networkRequests.push(request.url ?? ''));
  await app.listen({ port: 0, host: '127.0.0.1' });
  base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
  const site = { app, base, root, batch, networkRequests };
  sites.push(site);
  return site;
}

interface ReadBack {
  response: Response;
  manifest: BatchManifest;
  parts: BatchPart[];
  frames: BatchFrame[];
}

async function fetchBatch(site: Site, path = '/index.html', headers: Record<string, string> = {}): Promise<ReadBack> {
  const response = await fetch(site.base + path, { headers: { accept: BATCH_ACCEPT, ...headers } });
  expect(response.headers.get('content-type')).toBe(BATCH_MEDIA_TYPE);
  const frames: BatchFrame[] = [];
  for await (const frame of readBatch(response.body!)) frames.push(frame);
  const manifest = frames[0]?.type === 'manifest' ? frames[0].manifest : undefined;
  if (!manifest) throw new Error('no manifest');
  const parts = frames.flatMap((frame) => (frame.type === 'part' ? [frame.part] : []));
  return { response, manifest, parts, frames };
}

const header = (part: BatchPart, name: string): string | undefined => part.headers.find(([key]) => key === name)?.[1];

describe('batch responses', () => {
  it('sends the page first, then every embedded resource it holds, in one response', async () => {
    const site = await startSite();
    const { response, manifest, parts, frames } = await fetchBatch(site);
    expect(site.networkRequests).toEqual(['/index.html']);
    expect(response.headers.get('cache-control')).toBe('no-store');
    expect(response.headers.get('vary')).toMatch(/accept/i);
    expect(response.headers.get('vary')).toMatch(new RegExp(CACHE_DIGEST_HEADER, 'i'));

    expect(manifest.page).toBe(`${site.base}/index.html`);
    expect(parts[0]?.url).toBe(`${site.base}/index.html`);
    expect(new TextDecoder().decode(parts[0]?.body)).toContain('<img src="/img/29.png"');
    expect(header(parts[0]!, 'content-type')).toMatch(/^text\/html/);

    // 30 images and the style sheet; not the link to another page, not the video stream, not
    // a resource of another server, and not one that does not exist.
    const expected = [`${site.base}/style.css`, ...Array.from({ length: IMAGE_COUNT }, (_, i) => `${site.base}/img/${i}.png`)];
    expect([...manifest.parts].sort()).toEqual([...expected].sort());
    const byUrl = new Map(parts.slice(1).map((part) => [part.url, part]));
    expect([...byUrl.keys()].sort()).toEqual([...expected].sort());
    for (let i = 0; i < IMAGE_COUNT; i++) {
      const part = byUrl.get(`${site.base}/img/${i}.png`)!;
      expect(Buffer.from(part.body).equals(imageBytes(i))).toBe(true);
      expect(header(part, 'content-type')).toBe('image/png');
      expect(part.validator).toBe(header(part, 'etag'));
      expect(part.validator).toBeTruthy();
    }
    expect(frames.at(-1)).toEqual({ type: 'end', end: { sentParts: IMAGE_COUNT + 2, missing: [] } });
    expect(site.batch.stats).toMatchObject({ batches: 1, completed: 1, partsSent: IMAGE_COUNT + 1, partsCached: 0 });
  });

  it('leaves out what the cache digest holds, and sends what changed', async () => {
    const site = await startSite();
    const first = await fetchBatch(site);
    const held = first.parts.slice(1).map((part) => ({ url: part.url, validator: part.validator! }));
    // The client lacks image 5; image 7 changes on the server.
    const digest = encodeCacheDigest(held.filter((entry) => !entry.url.endsWith('/img/5.png')));
    await writeFile(join(site.root, 'img', '7.png'), imageBytes(7, 2));
    const second = await fetchBatch(site, '/index.html', { [CACHE_DIGEST_HEADER]: digest.value });
    expect(second.manifest.parts.sort()).toEqual([`${site.base}/img/5.png`, `${site.base}/img/7.png`]);
    // The page comes first; resources follow in completion order (docs/batching.md).
    expect(second.parts[0]?.url).toBe(`${site.base}/index.html`);
    expect(second.parts.slice(1).map((part) => part.url).sort()).toEqual([...second.manifest.parts].sort());
    const seven = second.parts.find((part) => part.url.endsWith('/img/7.png'))!;
    expect(Buffer.from(seven.body).equals(imageBytes(7, 2))).toBe(true);
    // What was left out is listed with the server's validator, so the client can confirm it.
    expect(second.manifest.cached).toHaveLength(IMAGE_COUNT + 1 - 2);
    for (const [url, validator] of second.manifest.cached) {
      expect(held.find((entry) => entry.url === url)?.validator).toBe(validator);
    }
  });

  it('ignores a malformed digest and sends everything', async () => {
    const site = await startSite();
    const { manifest } = await fetchBatch(site, '/index.html', { [CACHE_DIGEST_HEADER]: '%%%not-a-digest' });
    expect(manifest.parts).toHaveLength(IMAGE_COUNT + 1);
  });

  it('answers plain HTML, varying on Accept, when no batch is asked for', async () => {
    const site = await startSite();
    const response = await fetch(`${site.base}/index.html`, { headers: { accept: 'text/html' } });
    expect(response.headers.get('content-type')).toMatch(/^text\/html/);
    expect(response.headers.get('vary')).toMatch(/accept/i);
    expect(await response.text()).toContain('<img src="/img/0.png"');
    // Only HTML pages become batches.
    const image = await fetch(`${site.base}/img/1.png`, { headers: { accept: BATCH_ACCEPT } });
    expect(image.headers.get('content-type')).toBe('image/png');
    expect(Buffer.from(await image.arrayBuffer()).equals(imageBytes(1))).toBe(true);
    const head = await fetch(`${site.base}/index.html`, { method: 'HEAD', headers: { accept: BATCH_ACCEPT } });
    expect(head.headers.get('content-type')).toMatch(/^text\/html/);
    const notFound = await fetch(`${site.base}/nope.html`, { headers: { accept: BATCH_ACCEPT } });
    expect(notFound.status).toBe(404);
  });

  it('does nothing when disabled', async () => {
    const site = await startSite(false);
    const response = await fetch(`${site.base}/index.html`, { headers: { accept: BATCH_ACCEPT } });
    expect(response.headers.get('content-type')).toMatch(/^text\/html/);
  });

  it('compresses with brotli or gzip when the batch holds text worth compressing', async () => {
    // 11 KB of page and style sheet among 65 KB of images: worth it once the share allows.
    const site = await startSite({ minCompressibleShare: 0.1 });
    for (const [acceptEncoding, expected] of [
      ['gzip, deflate, br', 'br'],
      ['gzip', 'gzip'],
      ['identity', null],
    ] as const) {
      const { response, parts } = await fetchBatch(site, '/index.html', { 'accept-encoding': acceptEncoding });
      expect(response.headers.get('content-encoding')).toBe(expected);
      expect(parts).toHaveLength(IMAGE_COUNT + 2);
    }
  });

  it('does not compress a batch that is mostly incompressible images under "auto"', async () => {
    // By default text must be a quarter of the batch; here it is about a seventh.
    const site = await startSite();
    const { response } = await fetchBatch(site, '/index.html', { 'accept-encoding': 'br, gzip' });
    expect(response.headers.get('content-encoding')).toBeNull();
    const tiny = await startSite({ minCompressibleShare: 0, minCompressibleBytes: 1_000_000 });
    expect((await fetchBatch(tiny, '/index.html', { 'accept-encoding': 'br' })).response.headers.get('content-encoding')).toBeNull();
    const always = await startSite({ compression: 'always' });
    expect((await fetchBatch(always, '/index.html', { 'accept-encoding': 'gzip' })).response.headers.get('content-encoding')).toBe('gzip');
  });

  it('streams: the page arrives before slow embedded resources are read', async () => {
    let release: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const slowReader: ResourceReader = {
      head: async () => ({ status: 200, validator: '"v"', contentLength: 3, contentType: 'image/png', encoded: false }),
      get: async () => {
        await gate;
        return { status: 200, headers: [['content-type', 'image/png']], validator: '"v"', body: Buffer.from('png') };
      },
    };
    const site = await startSite({}, { reader: slowReader });
    const response = await fetch(`${site.base}/index.html`, { headers: { accept: BATCH_ACCEPT, 'accept-encoding': 'br' } });
    const frames = readBatch(response.body!);
    const first = await frames.next();
    const second = await frames.next();
    expect(first.value).toMatchObject({ type: 'manifest' });
    expect(second.value).toMatchObject({ type: 'part', part: { url: `${site.base}/index.html` } });
    // Nothing else could have been sent yet: every embedded resource is still blocked.
    release();
    const manifest = first.value?.type === 'manifest' ? first.value.manifest : undefined;
    let parts = 0;
    for await (const frame of frames) if (frame.type === 'part') parts += 1;
    expect(parts).toBe(manifest?.parts.length);
    expect(parts).toBeGreaterThanOrEqual(IMAGE_COUNT);
  });

  it('reports resources that fail after being announced as missing', async () => {
    const failing: ResourceReader = {
      head: async () => ({ status: 200, validator: '"v"', contentLength: 3, contentType: 'image/png', encoded: false }),
      get: async (path) => {
        if (path.endsWith('/3.png')) throw new Error('disk error');
        if (path.endsWith('/4.png')) return { status: 500, headers: [], validator: undefined, body: Buffer.alloc(0) };
        return { status: 200, headers: [['content-type', 'image/png']], validator: '"v"', body: Buffer.from('png') };
      },
    };
    const site = await startSite({}, { reader: failing });
    const { frames, parts } = await fetchBatch(site);
    expect(frames.at(-1)).toEqual({
      type: 'end',
      end: { sentParts: parts.length, missing: expect.arrayContaining([`${site.base}/img/3.png`, `${site.base}/img/4.png`]) },
    });
    expect(parts.some((part) => part.url.endsWith('/img/3.png'))).toBe(false);
    expect(site.batch.stats.partsMissing).toBe(2);
  });

  it('keeps parts and batches within their size bounds', async () => {
    const small = await startSite({ maxPartBytes: 2100 });
    const { manifest } = await fetchBatch(small);
    // Images 0..10 are at most 2100 bytes; the others, and the 8 KB style sheet, are left out.
    expect(manifest.parts.sort()).toEqual(Array.from({ length: 11 }, (_, i) => `${small.base}/img/${i}.png`).sort());

    const few = await startSite({ maxParts: 3 });
    expect((await fetchBatch(few)).manifest.parts).toHaveLength(3);

    const capped = await startSite({ maxBatchBytes: 10_000 });
    const { frames, parts } = await fetchBatch(capped);
    const bodyBytes = parts.reduce((sum, part) => sum + part.body.byteLength, 0);
    expect(bodyBytes).toBeLessThanOrEqual(10_000);
    const end = frames.at(-1);
    expect(end?.type === 'end' && end.end.missing.length).toBeGreaterThan(20);
  });

  it('answers the CORS preflight of a cross-origin batch request carrying a digest', async () => {
    const site = await startSite();
    const response = await fetch(`${site.base}/index.html`, {
      method: 'OPTIONS',
      headers: { origin: 'http://a.localhost:1', 'access-control-request-method': 'GET', 'access-control-request-headers': CACHE_DIGEST_HEADER },
    });
    expect(response.status).toBe(204);
    expect(response.headers.get('access-control-allow-headers')).toContain(CACHE_DIGEST_HEADER);
    expect(response.headers.get('access-control-allow-origin')).toBe('*');
    const other = await fetch(`${site.base}/index.html`, {
      method: 'OPTIONS',
      headers: { origin: 'http://a.localhost:1', 'access-control-request-method': 'GET', 'access-control-request-headers': `${CACHE_DIGEST_HEADER}, x-evil` },
    });
    expect(other.status).not.toBe(204);
  });

  it('stops reading resources when the client goes away', async () => {
    let reads = 0;
    const reader: ResourceReader = {
      head: async () => ({ status: 200, validator: '"v"', contentLength: 200_000, contentType: 'image/png', encoded: false }),
      get: async () => {
        reads += 1;
        return { status: 200, headers: [], validator: '"v"', body: Buffer.alloc(200_000) };
      },
    };
    const site = await startSite({ concurrency: 1 }, { reader });
    const controller = new AbortController();
    const response = await fetch(`${site.base}/index.html`, { headers: { accept: BATCH_ACCEPT }, signal: controller.signal });
    const frames = readBatch(response.body!);
    await frames.next();
    controller.abort();
    await frames.return();
    // Give the server a bounded moment to notice; it must not finish the batch.
    const deadline = Date.now() + 500;
    while (Date.now() < deadline && site.batch.stats.completed === 0 && reads < IMAGE_COUNT + 1) await new Promise((r) => setTimeout(r, 20));
    expect(site.batch.stats.completed).toBe(0);
    expect(reads).toBeLessThan(IMAGE_COUNT + 1);
  });

  it('rejects bad options with WEBPP_ERR_BAD_OPTIONS', async () => {
    const app = Fastify({ logger: false });
    expect(() => registerBatching(app, { pageUrl: () => undefined, localPathOf: () => undefined }, { maxParts: -1 })).toThrow(
      expect.objectContaining({ code: 'WEBPP_ERR_BAD_OPTIONS' }),
    );
    await app.close();
  });
});
