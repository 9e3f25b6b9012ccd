/**
 * Both halves together: three replica servers running the real @webpp/origin plugin (it
 * computes the bindings from the HTML, sends the header and CORS, serves /webpp.js and
 * /webpp-sw.js), and the worker in Chromium binding to the fastest and failing over.
 */
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, test } from '@playwright/test';
import { Cluster, PIXEL_PNG } from '../support/cluster/index.js';
import { openControlled, pageRendered, waitForState, workerState } from '../support/webpp-page.js';

let root: string;
let cluster: Cluster;

test.beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), 'webpp-site-'));
  mkdirSync(join(root, 'img'));
  const images = [1, 2, 3, 4].map((i) => `<img src="img/${i}.png" alt="" width="1" height="1">`).join('');
  writeFileSync(
    join(root, 'index.html'),
    `<!doctype html><html><head><meta charset="utf-8"><title>origin site</title>` +
      `<script src="/webpp.js" async></script><link rel="stylesheet" href="/style.css"></head>` +
      `<body><h1 id="title">Gallery</h1>${images}<script src="/app.js"></script></body></html>`,
  );
  // No script tag: the origin injects one.
  writeFileSync(join(root, 'plain.html'), `<!doctype html><html><head><title>plain</title></head><body><h1 id="title">Plain</h1></body></html>`);
  writeFileSync(join(root, 'style.css'), 'h1 { color: rgb(10, 20, 30); }');
  writeFileSync(join(root, 'app.js'), 'window.appLoaded = true;');
  for (const i of [1, 2, 3, 4]) writeFileSync(join(root, 'img', `${i}.png`), PIXEL_PNG);
});

test.afterAll(() => {
  rmSync(root, { recursive: true, force: true });
});

test.beforeEach(async () => {
  cluster = await Cluster.start({ root, delaysMs: { a: 150, b: 0, c: 150 } });
});

test.afterEach(async () => {
  await cluster.stop();
});

test('with real @webpp/origin replicas the worker binds to the fastest and survives its loss', async ({ page }) => {
  const fast = cluster.replica('b');
  await openControlled(page, cluster.logicalUrl('/index.html'));
  await waitForState(page, (state) => state.servers.length === 3 && state.decisions.at(-1)?.servedBy === fast.origin, {
    what: 'b preferred',
    between: async () => void (await page.reload()),
  });
  await page.reload();
  expect(await pageRendered(page)).toEqual({ images: 4, brokenImages: 0, styled: true, scripted: true });
  const state = await workerState(page);
  expect(state.counters.bindingsHeadersRejected).toBe(0);
  // The page came from b, and so did the images: by GET, or (with the origin's batch
  // transmission, docs/batching.md) in b's batch, which the worker checks with a HEAD.
  expect(state.decisions.filter((decision) => decision.navigation).at(-1)?.servedBy).toBe(fast.origin);
  expect(fast.log.some((entry) => entry.url === '/img/1.png' && (entry.method === 'GET' || entry.method === 'HEAD'))).toBe(true);

  await cluster.kill('b');
  await page.reload();
  expect(await pageRendered(page)).toEqual({ images: 4, brokenImages: 0, styled: true, scripted: true });
  const after = await workerState(page);
  expect(after.servers.find((server) => server.server === fast.origin)?.state).toBe('failed');
  expect(after.counters.failed).toBe(0);
});

test('a page without the tag gets it injected by the origin and the worker runs with the paper defaults', async ({ page }) => {
  await openControlled(page, cluster.logicalUrl('/plain.html'));
  await page.reload(); // observed: the page's response teaches its own binding
  expect((await workerState(page)).counters.observed).toBeGreaterThan(0);
  await page.reload(); // bound
  await expect(page.locator('#title')).toHaveText('Plain');
  const state = await workerState(page);
  expect(state.preset).toBe('paper');
  expect(state.decisions.some((decision) => decision.navigation && decision.logicalUrl === cluster.logicalUrl('/plain.html'))).toBe(true);
});
