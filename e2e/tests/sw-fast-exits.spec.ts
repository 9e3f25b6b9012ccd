/**
 * Requests the worker cannot improve are left to the browser: no respondWith, so they cost
 * what they cost without a worker (route.ts). Chromium tells which responses a service worker
 * answered (`response.fromServiceWorker()`, from the DevTools protocol's Network domain).
 */
import { expect, test } from '@playwright/test';
import type { Page } from '@playwright/test';
import { Cluster, demoSite } from '../support/cluster/index.js';
import { openControlled } from '../support/webpp-page.js';

let cluster: Cluster;

test.beforeEach(async () => {
  // holds: the directory binds each file of the site (every replica holds all), not "/*": /api/time has no bindings.
  cluster = await Cluster.start({ site: demoSite(1), delaysMs: { a: 0, b: 0, c: 0 }, holds: {} });
});

test.afterEach(async () => {
  await cluster.stop();
});

/** For each response to `path` the page gets, in order: did the worker answer it? */
function answeredByWorker(page: Page, path: string): boolean[] {
  const seen: boolean[] = [];
  page.on('response', (response) => {
    if (new URL(response.url()).pathname === path) seen.push(response.fromServiceWorker());
  });
  return seen;
}

test('a same-origin fetch() whose answer had nothing to learn is left to the browser afterwards', async ({ page }) => {
  await openControlled(page, cluster.logicalUrl('/index.html'));
  const viaWorker = answeredByWorker(page, '/api/time');
  for (let i = 0; i < 3; i++) await page.evaluate(async () => void (await (await fetch('/api/time')).text()));
  // The first answer is read for bindings (there are none); the next ones go straight to the network.
  expect(viaWorker).toEqual([true, false, false]);
  expect(cluster.replica('a').requests('/api/time', 'GET')).toHaveLength(3);
});

test('other methods are left to the browser; bound requests are the worker\'s', async ({ page }) => {
  await openControlled(page, cluster.logicalUrl('/index.html'));
  const echo = answeredByWorker(page, '/api/echo');
  const data = answeredByWorker(page, '/data.json');
  await page.evaluate(async () => {
    await (await fetch('/api/echo', { method: 'POST', headers: { 'content-type': 'text/plain' }, body: 'hi' })).text();
    await (await fetch('/data.json')).text();
  });
  expect(echo).toEqual([false]);
  expect(data).toEqual([true]);
});
