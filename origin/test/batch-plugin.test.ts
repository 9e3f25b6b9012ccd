/**
 * Batch transmission inside the webppOrigin plugin: the batch carries the pre-processed page
 * (bindings header, injected script tag), serves replicas under their logical URLs, follows
 * replica updates made through the management API, and obeys the plugin's options.
 */
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import Fastify, { type FastifyInstance } from 'fastify';
import fastifyStatic from '@fastify/static';
import {
  BATCH_ACCEPT,
  BATCH_MEDIA_TYPE,
  BINDINGS_HEADER,
  CACHE_DIGEST_HEADER,
  encodeCacheDigest,
  readBatch,
  type BatchFrame,
  type BatchPart,
} from '@webpp/core';
import { webppOrigin } from '../src/plugin.js';
import type { WebppOriginOptions } from '../src/options.js';
import { ADMIN_TOKEN, auth, bindingMap, removeTempDirs, tempDir } from './helpers.js';

afterAll(removeTempDirs);

const apps: FastifyInstance[] = [];
afterEach(async () => {
  await Promise.all(apps.splice(0).map((app) => app.close()));
});

async function site(): Promise<string> {
  const root = await tempDir('webpp-batch-plugin-');
  await mkdir(join(root, 'img'));
  const images = [1, 2, 3].map((i) => `<img src="img/${i}.png">`).join('');
  await writeFile(join(root, 'index.html'), `<!doctype html><html><head><title>t</title></head><body>${images}</body></html>`);
  for (const i of [1, 2, 3]) await writeFile(join(root, 'img', `${i}.png`), Buffer.alloc(100, i));
  return root;
}

/**
 * A listening server with the plugin. Its socket is bound first, so that the options (which
 * name the server's own URL) can be built from its address.
 */
async function start(
  root: string,
  options: Partial<WebppOriginOptions> | ((base: string) => Partial<WebppOriginOptions>) = {},
): Promise<{ app: FastifyInstance; base: string }> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const app = Fastify({
    logger: false,
    forceCloseConnections: true,
    serverFactory: (handler: (request: IncomingMessage, response: ServerResponse) => void) => {
      server.on('request', handler);
      return server;
    },
  }) as unknown as FastifyInstance;
  apps.push(app);
  const resolved = typeof options === 'function' ? options(base) : options;
  await app.register(webppOrigin, { publicUrl: base, adminToken: ADMIN_TOKEN, ...resolved });
  await app.register(fastifyStatic, { root });
  await app.ready();
  return { app, base };
}

async function batchOf(url: string, headers: Record<string, string> = {}): Promise<{ response: Response; frames: BatchFrame[]; parts: BatchPart[] }> {
  const response = await fetch(url, { headers: { accept: BATCH_ACCEPT, ...headers } });
  const frames: BatchFrame[] = [];
  if (response.headers.get('content-type') === BATCH_MEDIA_TYPE) for await (const frame of readBatch(response.body!)) frames.push(frame);
  else await response.arrayBuffer();
  return { response, frames, parts: frames.flatMap((frame) => (frame.type === 'part' ? [frame.part] : [])) };
}

describe('batching in the webppOrigin plugin', () => {
  it('is off by default', async () => {
    const root = await site();
    const { base, app } = await start(root);
    expect((await batchOf(`${base}/index.html`)).response.headers.get('content-type')).toMatch(/^text\/html/);
    expect(app.hasDecorator('webppBatch')).toBe(false); // off: nothing of it is registered (issue 24)
  });

  it('batches the pre-processed page when switched on', async () => {
    const root = await site();
    const { base } = await start(root, { batch: true, directory: { formatVersion: 1, entries: [{ logical: '/img/*', servers: ['http://127.0.0.1:1'] }] } });
    const { response, parts } = await batchOf(`${base}/index.html`);
    expect(response.headers.get('content-type')).toBe(BATCH_MEDIA_TYPE);
    // The bindings header travels on the batch (the worker learns from it) and in the page part.
    expect(bindingMap(response.headers.get(BINDINGS_HEADER) ?? undefined)).toHaveProperty(`${base}/img/*`);
    const page = parts[0]!;
    expect(page.headers.find(([name]) => name === BINDINGS_HEADER)?.[1]).toBe(response.headers.get(BINDINGS_HEADER));
    // The script tag was injected, exactly as in a plain GET.
    const plain = await (await fetch(`${base}/index.html`)).text();
    expect(new TextDecoder().decode(page.body)).toBe(plain);
    expect(plain).toContain('/webpp.js');
    // Not the injected page script: the worker keeps its own copy of it.
    expect(parts.map((part) => part.url).sort()).toEqual([`${base}/index.html`, `${base}/img/1.png`, `${base}/img/2.png`, `${base}/img/3.png`].sort());
  });

  it('sends a replica under its logical URL from the server that holds it', async () => {
    const root = await site();
    const logicalOrigin = 'http://a.localhost:8081';
    // This server (b) holds the site's replicas; the logical URLs name a.
    const { base: b } = await start(root, (base) => ({
      batch: true,
      logicalOrigin,
      directory: { formatVersion: 1, logicalOrigin, entries: [{ logical: '/*', servers: [logicalOrigin, base] }] },
    }));
    const { frames, parts } = await batchOf(`${b}/index.html`);
    const manifest = frames[0]?.type === 'manifest' ? frames[0].manifest : undefined;
    expect(manifest?.page).toBe(`${logicalOrigin}/index.html`);
    expect(parts.map((part) => part.url)).toEqual(expect.arrayContaining([`${logicalOrigin}/img/1.png`, `${logicalOrigin}/img/3.png`]));
    expect(Buffer.from(parts.find((part) => part.url.endsWith('/img/2.png'))!.body).equals(Buffer.alloc(100, 2))).toBe(true);
  });

  it('sends the new version after a PUT through the management API, and only that', async () => {
    const root = await site();
    const { app, base } = await start(root, { batch: true });
    const created = await app.inject({ method: 'POST', url: '/.well-known/webpp/replicas/img/2.png', headers: { ...auth, 'content-type': 'image/png' }, payload: Buffer.alloc(100, 2) });
    expect(created.statusCode).toBe(201);
    const first = await batchOf(`${base}/index.html`);
    const held = first.parts.slice(1).map((part) => ({ url: part.url, validator: part.validator! }));
    const updated = await app.inject({ method: 'PUT', url: '/.well-known/webpp/replicas/img/2.png', headers: { ...auth, 'content-type': 'image/png' }, payload: Buffer.alloc(120, 0xee) });
    expect(updated.statusCode).toBeLessThan(300);
    const second = await batchOf(`${base}/index.html`, { [CACHE_DIGEST_HEADER]: encodeCacheDigest(held).value });
    expect(second.parts.map((part) => part.url)).toEqual([`${base}/index.html`, `${base}/img/2.png`]);
    const image = second.parts[1]!;
    expect(Buffer.from(image.body).equals(Buffer.alloc(120, 0xee))).toBe(true);
    expect(image.validator).toMatch(/^"sha256-/);
  });

  it('can be switched off, pauses with the kill switch, and takes options', async () => {
    const root = await site();
    const off = await start(root, { batch: false });
    expect((await batchOf(`${off.base}/index.html`)).response.headers.get('content-type')).toMatch(/^text\/html/);
    const killed = await start(root, { batch: true, killSwitch: true });
    expect((await batchOf(`${killed.base}/index.html`)).response.headers.get('content-type')).toMatch(/^text\/html/);
    const tuned = await start(root, { batch: { maxParts: 1 } });
    expect((await batchOf(`${tuned.base}/index.html`)).parts).toHaveLength(2);
    expect(tuned.app.webppBatch?.stats.batches).toBe(1);
  });

  it('rejects bad batch options with WEBPP_ERR_BAD_OPTIONS', async () => {
    const app = Fastify({ logger: false });
    await expect(app.register(webppOrigin, { publicUrl: 'http://127.0.0.1:1', batch: { concurrency: 0 } }).ready()).rejects.toMatchObject({
      code: 'WEBPP_ERR_BAD_OPTIONS',
    });
    await app.close();
  });
});
