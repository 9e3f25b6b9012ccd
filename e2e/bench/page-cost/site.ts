/**
 * The page-cost bench's site (issue 26 §1): real pages with their assets
 * (e2e/fixtures/page-cost: MDN learning-area, HTML5 Boilerplate old and new, a Bootstrap
 * site) and the demo gallery (examples/demo/site), written into one folder that three
 * `webpp-origin` servers serve, once per variant:
 *
 * - `/plain/…`: the pages as they are (no script tag): `no-worker`;
 * - `/bare/…`: a pass-through worker registered on scope `/bare/` (`bare-worker`);
 * - `/webpp/…`: the webpp script tag, as `webpp-origin` would inject it (`webpp-warm`, `webpp-cold`).
 *
 * The servers run with `--no-inject`, so the variants differ only by the tag. Every variant
 * holds the same files; the directory lists `/*` on all three servers. `/r/` holds the
 * per-request row's bodies, bound to the logical origin's server alone.
 */
import { cpSync, mkdirSync, readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { randomBytes } from 'node:crypto';

const repoRoot = new URL('../../../', import.meta.url).pathname;
const FIXTURES = join(repoRoot, 'e2e/fixtures/page-cost');
const DEMO_SITE = join(repoRoot, 'examples/demo/site');

const VARIANTS = ['plain', 'bare', 'webpp'] as const;
export type Variant = (typeof VARIANTS)[number];

/** The pages measured: a short name and the page's path inside a variant. */
export const PAGES: readonly { page: string; path: string }[] = [
  { page: 'mdn/mdn-splash-page', path: '/mdn/html/multimedia-and-embedding/mdn-splash-page-finished/index.html' },
  { page: 'mdn/images-in-html', path: '/mdn/html/multimedia-and-embedding/images-in-html/index.html' },
  { page: 'mdn/responsive-images', path: '/mdn/html/multimedia-and-embedding/responsive-images/responsive.html' },
  { page: 'mdn/object-image', path: '/mdn/html/multimedia-and-embedding/other-embedding-technologies/object-image.html' },
  { page: 'mdn/vector-versus-raster', path: '/mdn/html/multimedia-and-embedding/adding-vector-graphics-to-the-web/vector-versus-raster.html' },
  { page: 'mdn/styling-tables', path: '/mdn/css/styling-boxes/styling-tables/punk-bands-complete.html' },
  { page: 'mdn/letterheaded-paper', path: '/mdn/css/styling-boxes/letterheaded-paper-finished/index.html' },
  { page: 'mdn/background-attachment', path: '/mdn/css/styling-boxes/backgrounds/background-attachment.html' },
  { page: 'mdn/image-gallery', path: '/mdn/javascript/building-blocks/gallery/index.html' },
  { page: 'mdn/number-guessing-game', path: '/mdn/javascript/introduction-to-js-1/first-splash/number-guessing-game.html' },
  { page: 'h5bp-5.3.0', path: '/h5bp-5.3.0/index.html' },
  { page: 'h5bp-9.0.1', path: '/h5bp-9.0.1/index.html' },
  { page: 'bootstrap-creative', path: '/bootstrap-creative/index.html' },
  { page: 'demo-gallery', path: '/demo/index.html' },
];

/** A webpp page with an element that fails to load (a missing image): the worker keeps its requests (direct.ts). */
export const FAILED_ELEMENT_PAGE = '/webpp/failed-element.html';

/**
 * An image the site lost, added after `load`: the async page script has run by then, so its
 * error listener tells the worker (an image that fails before the page script runs goes
 * unreported: in the quiet d3c99e9 run the worker left this page's requests to the browser
 * too). `data-failed` says the failure was seen.
 */
const FAILED_ELEMENT_HTML = `<!doctype html><html><head><title>failed element</title></head><body><script>
addEventListener('load', () => {
  const image = document.body.appendChild(document.createElement('img'));
  image.alt = '';
  image.addEventListener('error', () => (document.body.dataset.failed = 'yes'));
  image.src = '/webpp/missing.png';
});
</script></body></html>
`;

/** The per-request row's bodies: `/r/<bytes>.bin`. */
export const REQUEST_SIZES_BYTES = [5 * 1024, 50 * 1024] as const;
export const requestPath = (bytes: number): string => `/r/${bytes}.bin`;

/** The page script tag, as `webpp-origin` injects it (origin/src/options/plugin-schema.ts, injectScript). */
const WEBPP_TAG = '<script src="/webpp.js" async></script>';
const BARE_WORKER_PATH = '/bare/bare-sw.js';
/** A pass-through worker: every request goes to the network as the page asked. */
const BARE_WORKER = [
  "self.addEventListener('install', () => self.skipWaiting());",
  "self.addEventListener('activate', (event) => event.waitUntil(self.clients.claim()));",
  "self.addEventListener('fetch', (event) => event.respondWith(fetch(event.request)));",
  '',
].join('\n');
const BARE_TAG = `<script>navigator.serviceWorker.register('${BARE_WORKER_PATH}', { scope: '/bare/' });</script>`;

function tagFor(variant: Variant): string {
  if (variant === 'webpp') return WEBPP_TAG;
  if (variant === 'bare') return BARE_TAG;
  return '';
}

/** The demo's own tag goes (each variant sets its own), and its root-relative paths move under the variant. */
function demoHtml(html: string, variant: Variant): string {
  return html
    .replace(/\s*<script src="\/webpp\.js"[^>]*><\/script>/, '')
    .replace(/(["'(])\/(css|js|img|photos|fonts|favicon\.svg|about\.html|dashboard\.html|index\.html)/g, `$1/${variant}/demo/$2`);
}

function withTag(html: string, variant: Variant): string {
  const tag = tagFor(variant);
  if (tag === '') return html;
  const head = /<\/head>/i.exec(html);
  return head ? `${html.slice(0, head.index)}${tag}\n${html.slice(head.index)}` : `${tag}\n${html}`;
}

function htmlFiles(dir: string): string[] {
  const found: string[] = [];
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) found.push(...htmlFiles(path));
    else if (name.endsWith('.html')) found.push(path);
  }
  return found;
}

/** Writes the site under `root`; returns the directory entries (logical → every server, `/r/*` → the first). */
export function writeSite(root: string): void {
  for (const variant of VARIANTS) {
    const base = join(root, variant);
    mkdirSync(base, { recursive: true });
    cpSync(FIXTURES, base, { recursive: true });
    cpSync(DEMO_SITE, join(base, 'demo'), { recursive: true });
    for (const file of htmlFiles(base)) {
      const isDemo = relative(base, file).split(sep)[0] === 'demo';
      const html = readFileSync(file, 'utf8');
      writeFileSync(file, withTag(isDemo ? demoHtml(html, variant) : html, variant));
    }
  }
  writeFileSync(join(root, BARE_WORKER_PATH), BARE_WORKER);
  writeFileSync(join(root, FAILED_ELEMENT_PAGE), withTag(FAILED_ELEMENT_HTML, 'webpp'));
  mkdirSync(join(root, 'r'), { recursive: true });
  for (const bytes of REQUEST_SIZES_BYTES) writeFileSync(join(root, requestPath(bytes)), randomBytes(bytes));
}

/** The replication directory: the whole site on every server; the per-request bodies on the first alone. */
export function directory(origins: readonly string[]): object {
  const first = origins[0] as string;
  return {
    formatVersion: 1,
    logicalOrigin: first,
    entries: [
      { logical: '/*', servers: origins },
      { logical: '/r/*', servers: [first] },
    ],
  };
}
