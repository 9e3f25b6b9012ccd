/**
 * Bytes a batch sends for a srcset-heavy page (issue 12 §5): every responsive-image
 * candidate (what batches carried before), none of them (no client hints: the browser
 * fetches its pick), or the one the client hints pick. All three from the real
 * @webpp/origin in the same run; "every candidate" is the same origin with a BatchSource
 * whose embeddedUrls lists every candidate, as the old extraction did.
 *
 * The page: 8 product images, each `srcset` 400w/800w/1600w with `sizes="(min-width: 992px)
 * 25vw, 50vw"`, and a hero <picture> (webp 800w/1600w/2400w, then a JPEG <img>), PNG noise
 * sized like photos (bytes grow with area). Run: `npm run bench batch-srcset`
 * (or `node --import tsx e2e/bench/batch-srcset.bench.ts`). Writes docs/benchmarks/batch-srcset.json.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Fastify from 'fastify';
import fastifyStatic from '@fastify/static';
import { BATCH_ACCEPT, readBatch } from '@webpp/core';
import { registerBatching, webppOrigin } from '@webpp/origin';
import { noisePng } from '../support/png.js';

const WIDTHS = [400, 800, 1600];
const HERO_WIDTHS = [800, 1600, 2400];
const PRODUCTS = 8;

function site(): { root: string; candidates: string[] } {
  const root = mkdtempSync(join(tmpdir(), 'webpp-srcset-bench-'));
  mkdirSync(join(root, 'img'));
  const candidates: string[] = [];
  const write = (name: string, width: number): void => {
    writeFileSync(join(root, 'img', name), noisePng(width / 4, Math.round((width * 0.75) / 4)));
    candidates.push(`/img/${name}`);
  };
  for (let i = 0; i < PRODUCTS; i++) for (const width of WIDTHS) write(`p${i}-${width}.png`, width);
  for (const width of HERO_WIDTHS) write(`hero-${width}.webp`, width);
  write('hero.jpg', 1600);
  const products = Array.from(
    { length: PRODUCTS },
    (_, i) => `<img src="img/p${i}-800.png" srcset="${WIDTHS.map((w) => `img/p${i}-${w}.png ${w}w`).join(', ')}" sizes="(min-width: 992px) 25vw, 50vw" alt="">`,
  ).join('\n');
  writeFileSync(
    join(root, 'index.html'),
    `<!doctype html><html><head><meta charset="utf-8"><link rel="stylesheet" href="site.css"></head><body>
<picture><source type="image/webp" srcset="${HERO_WIDTHS.map((w) => `img/hero-${w}.webp ${w}w`).join(', ')}" sizes="100vw"><img src="img/hero.jpg" alt=""></picture>
${products}</body></html>`,
  );
  writeFileSync(join(root, 'site.css'), 'body { margin: 0 } img { max-width: 100% }\n');
  return { root, candidates };
}

async function batchBytes(base: string, headers: Record<string, string>): Promise<{ parts: number; bodyBytes: number }> {
  const response = await fetch(`${base}/index.html`, { headers: { accept: BATCH_ACCEPT, 'accept-encoding': 'identity', ...headers } });
  let parts = 0;
  let bodyBytes = 0;
  for await (const frame of readBatch(response.body as ReadableStream<Uint8Array>)) {
    if (frame.type === 'part') {
      parts += 1;
      bodyBytes += frame.part.body.byteLength;
    }
  }
  return { parts: parts - 1, bodyBytes };
}

async function start(root: string, everyCandidate: string[] | undefined): Promise<{ base: string; close: () => Promise<void> }> {
  const app = Fastify({ logger: false });
  let base = '';
  if (everyCandidate === undefined) {
    await app.register(webppOrigin, { publicUrl: 'http://127.0.0.1:1', batch: true, injectScript: false });
  } else {
    registerBatching(app, {
      pageUrl: (request) => new URL(request.url, base).href,
      localPathOf: (url) => new URL(url).pathname,
      embeddedUrls: () => ['/site.css', ...everyCandidate].map((path) => new URL(path, base).href),
    });
  }
  await app.register(fastifyStatic, { root });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const address = app.server.address();
  base = `http://127.0.0.1:${typeof address === 'object' && address !== null ? address.port : 0}`;
  return { base, close: () => app.close() };
}

const { root, candidates } = site();
try {
  const every = await start(root, candidates);
  const all = await batchBytes(every.base, {});
  await every.close();
  const origin = await start(root, undefined);
  const cells = {
    everyCandidate: all,
    noHints: await batchBytes(origin.base, {}),
    dpr1Viewport1280: await batchBytes(origin.base, { 'sec-ch-dpr': '1', 'sec-ch-viewport-width': '1280' }),
    dpr2Viewport390: await batchBytes(origin.base, { 'sec-ch-dpr': '2', 'sec-ch-viewport-width': '390' }),
  };
  await origin.close();
  const results = {
    date: new Date().toISOString().slice(0, 10),
    command: 'npm run bench batch-srcset',
    page: `${PRODUCTS} srcset images (${WIDTHS.join('/')}w) + a <picture> (webp ${HERO_WIDTHS.join('/')}w, JPEG fallback), PNG noise`,
    cells: Object.fromEntries(
      Object.entries(cells).map(([name, cell]) => [name, { ...cell, ratioToEveryCandidate: Number((cell.bodyBytes / all.bodyBytes).toFixed(3)) }]),
    ),
  };
  console.log(JSON.stringify(results, null, 2));
  writeFileSync(new URL('../../docs/benchmarks/batch-srcset.json', import.meta.url), `${JSON.stringify(results, null, 2)}\n`);
} finally {
  rmSync(root, { recursive: true, force: true });
}
