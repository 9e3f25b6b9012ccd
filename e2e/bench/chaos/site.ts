/**
 * The chaos bench's site, written to a temporary folder at bench start: four HTML pages that
 * link each other, one style sheet, one script, six noise images and one 1 MiB binary that
 * two of the pages fetch and check byte for byte (SHA-256). Every byte comes from a seeded
 * xoshiro stream, so the same seed gives the same site.
 *
 * The pages carry the page script tag themselves (`<script src="/webpp.js" data-_preset=…>`,
 * an internal override: the values of the paper's policies, which the default webpp policy
 * does not use), so the origin leaves them as they are.
 */
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createRandom, type RandomSource } from '@webpp/netem';
import { rgbPng } from '../../support/png.js';

const BIG_FILE_PATH = '/files/big.bin';
export const BIG_FILE_BYTES = 1024 * 1024;
/** The colour the style sheet gives `#title`: a page whose CSS did not apply shows another. */
export const TITLE_COLOR = 'rgb(10, 20, 30)';

interface ChaosImage {
  path: string;
  widthPx: number;
  heightPx: number;
}

interface ChaosPage {
  path: string;
  images: ChaosImage[];
  /** The page's script fetches BIG_FILE_PATH and checks its length and SHA-256. */
  fetchesBigFile: boolean;
}

export interface ChaosSite {
  root: string;
  pages: ChaosPage[];
  bigFileSha256: string;
  totalBytes: number;
}

function randomBytesFrom(random: RandomSource, length: number): Buffer {
  const bytes = Buffer.alloc(length);
  for (let i = 0; i < length; i++) bytes[i] = Math.floor(random() * 256);
  return bytes;
}

/** A noise image: incompressible, so its bytes really cross the emulated links. */
function noiseImage(random: RandomSource, widthPx: number, heightPx: number): Buffer {
  return rgbPng(widthPx, Array.from({ length: heightPx }, () => randomBytesFrom(random, widthPx * 3)), 1);
}

const PAGE_TITLES: Record<string, string> = {
  '/index.html': 'Home',
  '/gallery.html': 'Gallery',
  '/about.html': 'About',
  '/data.html': 'Data',
};

function pageHtml(page: ChaosPage, preset: string): string {
  const nav = Object.entries(PAGE_TITLES)
    .map(([path, title]) => `<a href="${path}">${title}</a>`)
    .join(' · ');
  const images = page.images
    .map((image) => `<img src="${image.path}" alt="" width="${image.widthPx}" height="${image.heightPx}" data-w="${image.widthPx}">`)
    .join('\n');
  return `<!doctype html>
<html><head><meta charset="utf-8"><title>${PAGE_TITLES[page.path]} · chaos site</title>
<script src="/webpp.js" data-_preset="${preset}" async></script>
<link rel="stylesheet" href="/css/site.css">
</head><body data-big="${page.fetchesBigFile ? '1' : ''}">
<nav>${nav}</nav>
<h1 id="title">${PAGE_TITLES[page.path]}</h1>
<p>A page of the chaos bench's site, served by whichever replica the worker picks.</p>
<div class="images">${images}</div>
<p id="big"></p>
<script src="/js/app.js"></script>
</body></html>
`;
}

/**
 * app.js: fetches the 1 MiB file (bypassing the HTTP cache, so every load moves its bytes
 * over a link) and exposes the outcome as `window.chaosBigFile`, a promise the bench awaits.
 */
function appScript(): string {
  return `window.appLoaded = true;
if (document.body.dataset.big === '1') {
  window.chaosBigFile = fetch('${BIG_FILE_PATH}', { cache: 'no-store' })
    .then(async (response) => {
      if (!response.ok) return { status: response.status, error: 'status ' + response.status };
      const buffer = await response.arrayBuffer();
      const digest = new Uint8Array(await crypto.subtle.digest('SHA-256', buffer));
      const sha256 = Array.from(digest, (byte) => byte.toString(16).padStart(2, '0')).join('');
      document.getElementById('big').textContent = buffer.byteLength + ' bytes, sha-256 ' + sha256;
      return { status: response.status, bytes: buffer.byteLength, sha256 };
    })
    .catch((error) => ({ error: String(error) }));
}
`;
}

export function writeChaosSite(seed: string | number, preset: string): ChaosSite {
  const random = createRandom(seed, 'chaos-site');
  const root = mkdtempSync(join(tmpdir(), 'webpp-chaos-site-'));
  for (const folder of ['css', 'js', 'img', 'files']) mkdirSync(join(root, folder));
  let totalBytes = 0;
  const write = (path: string, body: string | Buffer): void => {
    writeFileSync(join(root, path), body);
    totalBytes += Buffer.byteLength(body);
  };

  const images: ChaosImage[] = Array.from({ length: 6 }, (_, i) => ({ path: `/img/photo-${i + 1}.png`, widthPx: 96 + 16 * i, heightPx: 72 + 8 * i }));
  for (const image of images) write(image.path, noiseImage(random, image.widthPx, image.heightPx));
  const big = randomBytesFrom(random, BIG_FILE_BYTES);
  write(BIG_FILE_PATH, big);
  write('/css/site.css', `body { font-family: sans-serif; margin: 2em; }\n#title { color: ${TITLE_COLOR}; }\n.images img { margin: 4px; }\n`);
  write('/js/app.js', appScript());

  const pages: ChaosPage[] = [
    { path: '/index.html', images: images.slice(0, 3), fetchesBigFile: true },
    { path: '/gallery.html', images, fetchesBigFile: false },
    { path: '/about.html', images: images.slice(5), fetchesBigFile: false },
    { path: '/data.html', images: images.slice(3, 4), fetchesBigFile: true },
  ];
  for (const page of pages) write(page.path, pageHtml(page, preset));
  return { root, pages, bigFileSha256: createHash('sha256').update(big).digest('hex'), totalBytes };
}
