/**
 * The Workbox path's exit where the worker cannot help (sw/src/workbox.ts, `leaveToBrowser`):
 * on three equal replicas, the route matcher leaves a page's bound same-origin images to the
 * browser (Workbox's router finds no route: no respondWith), as the bundled worker does
 * (e2e/tests/sw-direct.spec.ts); when the own origin stops, the next load fails over.
 */
import { expect, test } from '@playwright/test';
import type { Page, Response } from '@playwright/test';
import { Cluster, PIXEL_PNG, demoSite } from '../support/cluster/index.js';
import { bundleSiteWorker } from '../support/site-worker-bundle.js';

const IMAGES = 8;
const MAX_LOADS = 12;

let cluster: Cluster;
let workerSource: string;

test.beforeAll(async () => {
  workerSource = await bundleSiteWorker(new URL('../support/workbox-lean-sw.ts', import.meta.url));
});

test.beforeEach(async () => {
  const site = demoSite(IMAGES);
  site['/site-sw.js'] = { contentType: 'text/javascript', body: () => workerSource, cacheControl: 'no-cache' };
  cluster = await Cluster.start({
    site,
    delaysMs: { a: 0, b: 0, c: 0 },
    pageScript: `<script>navigator.serviceWorker.register('/site-sw.js')</script>`,
    origin: { injectScript: false },
  });
});

test.afterEach(async () => {
  await cluster.stop();
});

/** Reloads the page: for each of its images, did the worker answer it, and its bytes. */
async function load(page: Page): Promise<{ viaWorker: boolean; body: Buffer }[]> {
  const responses: Promise<{ viaWorker: boolean; body: Buffer }>[] = [];
  const onResponse = (response: Response): void => {
    if (new URL(response.url()).pathname.startsWith('/img/')) responses.push(response.body().then((body) => ({ viaWorker: response.fromServiceWorker(), body })));
  };
  page.on('response', onResponse);
  await page.reload({ waitUntil: 'load' });
  page.off('response', onResponse);
  return Promise.all(responses);
}

test('leaveToBrowser: equal replicas, the page\'s images go to the own origin without the worker, bytes intact', async ({ page }) => {
  await page.goto(cluster.logicalUrl('/index.html'));
  await page.waitForFunction(() => navigator.serviceWorker.controller !== null);
  let images: { viaWorker: boolean; body: Buffer }[] = [];
  for (let loads = 0; loads < MAX_LOADS; loads++) {
    images = await load(page);
    if (images.filter((image) => !image.viaWorker).length > IMAGES / 2) break;
  }
  // Before, the Workbox path left nothing to the browser: every image came through the worker.
  expect(images.filter((image) => !image.viaWorker).length, JSON.stringify(images.map((image) => image.viaWorker))).toBeGreaterThan(IMAGES / 2);
  for (const image of images) expect(image.body.equals(PIXEL_PNG)).toBe(true);

  // The own origin stops: the next navigation goes through the worker, fails over, and its page's images are bound again.
  await cluster.replica('a').kill();
  const next = await load(page);
  expect(next).toHaveLength(IMAGES);
  for (const image of next) expect({ viaWorker: image.viaWorker, intact: image.body.equals(PIXEL_PNG) }).toEqual({ viaWorker: true, intact: true });
});
