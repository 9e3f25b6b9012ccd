/**
 * <object> and <embed> content fails over with the page (issue 25, item 3). Chromium fetches
 * `<object data>` and `<embed src>` past the service worker, so when the page's own origin
 * dies the page comes from a replica while these loads fail. The page script moves them to
 * a live replica the worker names (sw/src/embed-relocation.ts).
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, test } from '@playwright/test';
import type { Page } from '@playwright/test';
import { Cluster } from '../support/cluster/index.js';
import { solidPng } from '../support/png.js';
import { openControlled, waitForState, workerStateFromController } from '../support/webpp-page.js';

/** A one-page PDF (Chromium's viewer opens it in the <object>). */
const PDF = Buffer.from(
  '%PDF-1.1\n1 0 obj<</Type/Catalog/Pages 2 0 R>>endobj 2 0 obj<</Type/Pages/Kids[3 0 R]/Count 1>>endobj ' +
    '3 0 obj<</Type/Page/Parent 2 0 R/MediaBox[0 0 200 200]>>endobj\ntrailer<</Root 1 0 R>>\n%%EOF\n',
);

const IMAGE_OBJECT = '<object id="image" data="img/dinosaur.png" type="image/png" width="64" height="64"><p id="image-fallback">no image</p></object>';
const PDF_OBJECT = '<object id="pdf" data="doc/sample.pdf" type="application/pdf" width="300" height="300"><p id="pdf-fallback">no PDF plugin</p></object>';
const IMAGE_EMBED = '<embed id="embed" src="img/dinosaur.png" type="image/png" width="64" height="64">';

/** A page; an inline script records every load and error of its <object>/<embed> elements. */
function page(body: string): string {
  return (
    `<!doctype html><html><head><meta charset="utf-8"><title>embedding</title>` +
    `<script>window.embedEvents = []; for (const type of ['load', 'error']) document.addEventListener(type, (event) => { const target = event.target; ` +
    `if (target instanceof HTMLObjectElement || target instanceof HTMLEmbedElement) embedEvents.push({ id: target.id, type, url: target.data || target.src }); }, true);</script>` +
    `<script src="/webpp.js" async></script></head>` +
    `<body><h1 id="title">Embedding</h1>${body}</body></html>`
  );
}

let root: string;
let cluster: Cluster;

test.beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), 'webpp-embeds-'));
  mkdirSync(join(root, 'img'));
  mkdirSync(join(root, 'doc'));
  writeFileSync(join(root, 'img', 'dinosaur.png'), solidPng([200, 80, 40], 64));
  writeFileSync(join(root, 'doc', 'sample.pdf'), PDF);
  writeFileSync(join(root, 'object-image.html'), page(IMAGE_OBJECT));
  writeFileSync(join(root, 'object-pdf.html'), page(PDF_OBJECT));
  writeFileSync(join(root, 'mixed.html'), page(IMAGE_OBJECT + IMAGE_EMBED + PDF_OBJECT));
});

test.afterAll(() => rmSync(root, { recursive: true, force: true }));

test.afterEach(async () => {
  await cluster.stop();
});

interface EmbedView {
  id: string;
  url: string;
  fallbackShown: boolean;
  /** The last load or error event of the element now in the page. */
  last: string | undefined;
  hasFrame: boolean;
}

/** Each element by id, once each has had its last load or error event (bounded). */
async function embeds(page: Page, ids: string[]): Promise<Record<string, EmbedView>> {
  await page.waitForLoadState('load');
  const read = (): Promise<Record<string, EmbedView>> =>
    page.evaluate((wanted) => {
      const events = (window as unknown as { embedEvents: { id: string; type: string; url: string }[] }).embedEvents;
      return Object.fromEntries(
        wanted.map((id) => {
          const element = document.getElementById(id) as HTMLObjectElement | HTMLEmbedElement;
          const url = element instanceof HTMLObjectElement ? element.data : element.src;
          const fallback = document.getElementById(`${id}-fallback`);
          const last = events.filter((event) => event.id === id && event.url === url).at(-1)?.type;
          const hasFrame = element instanceof HTMLObjectElement && element.contentWindow !== null;
          return [id, { id, url, fallbackShown: fallback !== null && fallback.offsetHeight > 0, last, hasFrame }];
        }),
      );
    }, ids);
  let views = await read();
  for (let poll = 0; poll < 100 && Object.values(views).some((view) => view.last === undefined || (view.last === 'error' && view.url.startsWith(cluster.logicalOrigin))); poll++) {
    await page.waitForTimeout(100);
    views = await read();
  }
  return views;
}

const live = (): string[] => [cluster.replica('b').origin, cluster.replica('c').origin];

async function killOwnOriginAndReload(page: Page, path: string): Promise<void> {
  await openControlled(page, cluster.logicalUrl(path));
  await page.reload(); // the worker has the page's bindings now
  await cluster.kill('a');
  await page.reload();
  await expect(page.locator('#title')).toHaveText('Embedding');
}

for (const [path, ids] of [
  ['/object-image.html', ['image']],
  ['/object-pdf.html', ['pdf']],
  ['/mixed.html', ['image', 'embed', 'pdf']],
] as const) {
  test(`${path}: with the page's own origin dead, its <object>/<embed> content comes from a live replica`, async ({ page }) => {
    cluster = await Cluster.start({ root, delaysMs: { a: 0, b: 100, c: 100 } });
    await killOwnOriginAndReload(page, path);
    const views = await embeds(page, [...ids]);
    for (const id of ids) {
      const view = views[id]!;
      expect(view.url, JSON.stringify(view)).toMatch(new RegExp(`^(${live().join('|')})/`));
      expect(view.last, JSON.stringify(view)).toBe('load');
      expect(view.fallbackShown, JSON.stringify(view)).toBe(false);
      if (id === 'pdf') expect(view.hasFrame, JSON.stringify(view)).toBe(true); // the viewer, not the fallback
    }
  });
}

test('a page served by a faster replica: a dead own origin is found by the worker, a live one is left alone', async ({ page }) => {
  cluster = await Cluster.start({ root, delaysMs: { a: 150, b: 0, c: 150 } });
  await openControlled(page, cluster.logicalUrl('/mixed.html'));
  await waitForState(page, (state) => state.decisions.filter((decision) => decision.navigation).at(-1)?.servedBy === cluster.replica('b').origin, {
    what: 'the page from b',
    between: async () => void (await page.reload()),
  });
  // Own origin up: the elements stay where the page put them (nothing is loaded twice).
  await page.reload();
  let views = await embeds(page, ['image', 'embed', 'pdf']);
  for (const view of Object.values(views)) {
    expect(view.url.startsWith(cluster.logicalOrigin), JSON.stringify(view)).toBe(true);
    expect(view.last, JSON.stringify(view)).toBe('load');
  }

  await cluster.kill('a');
  await page.reload();
  await expect(page.locator('#title')).toHaveText('Embedding');
  views = await embeds(page, ['image', 'embed', 'pdf']);
  for (const view of Object.values(views)) {
    expect(view.url, JSON.stringify(view)).toMatch(new RegExp(`^(${live().join('|')})/`));
    expect(view.last, JSON.stringify(view)).toBe('load');
    expect(view.fallbackShown, JSON.stringify(view)).toBe(false);
  }
  const state = await workerStateFromController(page);
  expect(state.decisions.filter((decision) => decision.navigation).at(-1)?.servedBy).not.toBe(cluster.logicalOrigin);
});
