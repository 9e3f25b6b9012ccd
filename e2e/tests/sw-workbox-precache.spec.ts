/**
 * A site whose own Workbox worker precaches its app shell (the page, its stylesheet and
 * script) and adds webpp's replica strategy for the rest (e2e/support/workbox-precache-sw.ts).
 * The precached page never reaches the replica strategy, so its bindings are read from the
 * precache (replicaCacheLearningPlugin): the page's images are bound to the fastest replica.
 */
import { expect, test } from '@playwright/test';
import { Cluster, demoSite } from '../support/cluster/index.js';
import { bundleSiteWorker } from '../support/site-worker-bundle.js';
import { pageRendered, workerStateFromController } from '../support/webpp-page.js';

let cluster: Cluster;
let workerSource: string;

test.beforeAll(async () => {
  workerSource = await bundleSiteWorker(new URL('../support/workbox-precache-sw.ts', import.meta.url));
});

test.beforeEach(async () => {
  const site = demoSite(4);
  // No fetch() from the page: every same-origin page, stylesheet and script is precached.
  site['/app.js'] = { contentType: 'text/javascript; charset=utf-8', body: 'window.appLoaded = true;' };
  site['/site-sw.js'] = { contentType: 'text/javascript', body: () => workerSource, cacheControl: 'no-cache' };
  cluster = await Cluster.start({
    site,
    delaysMs: { a: 150, b: 0, c: 150 },
    pageScript: `<script>navigator.serviceWorker.register('/site-sw.js')</script>`,
    origin: { injectScript: false },
  });
});

test.afterEach(async () => {
  await cluster.stop();
});

test('a precached page: its bindings are read from the precache and its images come from the fastest replica', async ({ page }) => {
  await page.goto(cluster.logicalUrl('/index.html'));
  await page.waitForFunction(() => navigator.serviceWorker.controller !== null);
  const b = cluster.replica('b').origin;
  // No page script here: ask the worker itself, reloading between polls (bounded).
  let state = await workerStateFromController(page);
  for (let load = 0; load < 20 && !state.decisions.some((d) => d.logicalUrl.endsWith('/img/1.png') && d.servedBy === b); load++) {
    await page.reload();
    await page.waitForFunction(() => navigator.serviceWorker.controller !== null);
    state = await workerStateFromController(page);
  }
  expect(state.decisions.filter((d) => d.servedBy === b).map((d) => new URL(d.logicalUrl).pathname)).toContain('/img/1.png');
  expect(state.bindings.count).toBeGreaterThan(0);
  expect(await pageRendered(page)).toMatchObject({ images: 4, brokenImages: 0, styled: true, scripted: true });
  expect(cluster.replica('b').requests('/img/1.png', 'GET').length).toBeGreaterThan(0);
  // The page itself came from the precache: the origin served it once, at install.
  expect(cluster.replica('a').requests('/index.html', 'GET').length).toBeLessThanOrEqual(2);
});
