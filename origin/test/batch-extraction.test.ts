/**
 * What a page's batch carries (docs/batching.md, "Which resources a batch carries"), from
 * the real webpp origin plugin with batching over real HTTP on loopback: resources its style
 * sheets load, followed through @import with a bound, and the one responsive-image candidate
 * the request's client hints pick (or none without hints).
 */
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import Fastify, { type FastifyInstance } from 'fastify';
import fastifyStatic from '@fastify/static';
import { BATCH_ACCEPT, readBatch, type BatchManifest, type BatchPart } from '@webpp/core';
import { webppOrigin } from '../src/index.js';
import { removeTempDirs, tempDir } from './helpers.js';

afterAll(removeTempDirs);
const apps: FastifyInstance[] = [];
afterEach(async () => {
  await Promise.all(apps.splice(0).map((app) => app.close()));
});

const PAGE = `<!doctype html><html><head><link rel="stylesheet" href="/css/site.css">
  <style>@import "/css/inline-import.css"; .promo { background: url(/img/promo.png) }</style></head>
  <body class="home"><h1 class="title">Привет, hello</h1><p class="promo">Offer</p>
  <img src="/img/a-1x.png" srcset="/img/a-1x.png 1x, /img/a-2x.png 2x" alt="">
  <picture><source media="(min-width: 900px)" srcset="/img/wide.png"><img src="/img/narrow.png" alt=""></picture>
  <object data="/img/chart.svg" type="image/svg+xml"></object>
  <noscript><img src="/img/noscript.png"></noscript></body></html>`;

const FILES: Record<string, string> = {
  '/index.html': PAGE,
  '/css/site.css': `@import url("level2.css");
    @font-face { font-family: Title; src: url(../fonts/title.woff2) format("woff2"), url(../fonts/title.woff) format("woff") }
    @font-face { font-family: Title; src: url(../fonts/title-cyrillic.woff2); unicode-range: U+0400-045F }
    @font-face { font-family: Title; src: url(../fonts/title-greek.woff2); unicode-range: U+0370-03FF }
    @font-face { font-family: Unused; src: url(../fonts/unused.woff2) }
    .title { font-family: Title, serif } .home { background: url(../img/home-bg.png) }
    .absent { background: url(../img/absent.png) } .title:hover { background: url(../img/hover.png) }`,
  '/css/level2.css': '@import "level3.css"; body { background-image: url(/img/level2.png) }',
  '/css/level3.css': '@import "level4.css"; p { list-style-image: url(/img/level3.png) }',
  '/css/level4.css': '@import "level5.css"; h1 { border-image-source: url(/img/level4.png) }',
  '/css/level5.css': 'h1 { cursor: url(/img/level5.png), auto }',
  '/css/inline-import.css': '.promo { border: 1px solid }',
};
const IMAGES = ['promo', 'a-1x', 'a-2x', 'wide', 'narrow', 'noscript', 'home-bg', 'absent', 'hover', 'level2', 'level3', 'level4', 'level5'];

async function startOrigin(): Promise<string> {
  const root = await tempDir('webpp-batch-extraction-');
  for (const [path, text] of Object.entries(FILES)) {
    await mkdir(join(root, path, '..'), { recursive: true });
    await writeFile(join(root, path), text);
  }
  await mkdir(join(root, 'img'), { recursive: true });
  await mkdir(join(root, 'fonts'), { recursive: true });
  for (const name of IMAGES) await writeFile(join(root, 'img', `${name}.png`), Buffer.alloc(100, name.length));
  await writeFile(join(root, 'img', 'chart.svg'), '<svg xmlns="http://www.w3.org/2000/svg"/>');
  for (const name of ['title.woff2', 'title.woff', 'title-cyrillic.woff2', 'title-greek.woff2', 'unused.woff2']) await writeFile(join(root, 'fonts', name), Buffer.alloc(50, 1));
  const app = Fastify({ logger: false, forceCloseConnections: true });
  apps.push(app);
  // The page names this origin by its public URL; the tests reach it by its address.
  await app.register(webppOrigin, { publicUrl: 'http://a.localhost:8081', batch: true, injectScript: false });
  await app.register(fastifyStatic, { root });
  await app.listen({ port: 0, host: '127.0.0.1' });
  return `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
}

async function batchOf(base: string, headers: Record<string, string> = {}): Promise<{ response: Response; manifest: BatchManifest; parts: BatchPart[] }> {
  const response = await fetch(`${base}/index.html`, { headers: { accept: BATCH_ACCEPT, ...headers } });
  let manifest: BatchManifest | undefined;
  const parts: BatchPart[] = [];
  for await (const frame of readBatch(response.body!)) {
    if (frame.type === 'manifest') manifest = frame.manifest;
    if (frame.type === 'part') parts.push(frame.part);
  }
  return { response, manifest: manifest!, parts };
}

const paths = (urls: string[]): string[] => urls.map((url) => new URL(url).pathname).sort();

describe('a batch carries what the browser will fetch', () => {
  it('follows style sheets: imports (4 levels), fonts the page uses, backgrounds of rules it matches', async () => {
    const base = await startOrigin();
    const { manifest, parts } = await batchOf(base);
    expect(paths(manifest.parts)).toEqual(
      [
        '/css/site.css', '/css/inline-import.css', '/css/level2.css', '/css/level3.css', '/css/level4.css', '/css/level5.css',
        '/fonts/title.woff2', '/fonts/title-cyrillic.woff2',
        '/img/promo.png', '/img/home-bg.png', '/img/level2.png', '/img/level3.png', '/img/level4.png',
      ].sort(),
    );
    // Not what <object data> shows: Chromium fetches it past the worker, so a batched copy would be sent twice (issue 25 §4).
    expect(paths(manifest.parts)).not.toContain('/img/chart.svg');
    // Every announced part arrives, the style sheets included (read once, while planning).
    expect(paths(parts.slice(1).map((part) => part.url))).toEqual(paths(manifest.parts));
    const sheet = parts.find((part) => part.url.endsWith('/css/site.css'));
    expect(new TextDecoder().decode(sheet?.body)).toContain('@import url("level2.css")');
  });

  it('asks for client hints, and varies on them', async () => {
    const base = await startOrigin();
    const plain = await fetch(`${base}/index.html`);
    expect(plain.headers.get('accept-ch')).toBe('Sec-CH-DPR, Sec-CH-Viewport-Width');
    const { response } = await batchOf(base);
    expect(response.headers.get('vary')).toMatch(/Sec-CH-DPR, Sec-CH-Viewport-Width/);
  });

  it('sends the responsive-image candidate the hints pick, and none without hints', async () => {
    const base = await startOrigin();
    const candidates = ['/img/a-1x.png', '/img/a-2x.png', '/img/wide.png', '/img/narrow.png'];
    const chosen = async (headers: Record<string, string>) => paths((await batchOf(base, headers)).manifest.parts).filter((path) => candidates.includes(path));
    expect(await chosen({})).toEqual([]);
    expect(await chosen({ 'sec-ch-dpr': '1', 'sec-ch-viewport-width': '1280' })).toEqual(['/img/a-1x.png', '/img/wide.png']);
    expect(await chosen({ 'sec-ch-dpr': '2', 'sec-ch-viewport-width': '600' })).toEqual(['/img/a-2x.png', '/img/narrow.png']);
    // Only the density candidate can be told without the viewport width.
    expect(await chosen({ 'sec-ch-dpr': '2' })).toEqual(['/img/a-2x.png']);
  });
});
