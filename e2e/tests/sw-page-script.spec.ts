/**
 * What the page script (/webpp.js) costs a warm page (issue 26; docs/service-worker.md, "What
 * the worker costs a page"): the page's `load` waits for this async script, so the script
 * comes from the worker's copy (no request to the origin on the page's path), and its own
 * work (registration, Resource Timing reports to the worker, the state's write) waits until
 * the `load` event is over. The reports still reach the worker, and other options on the tag
 * still register a new worker.
 */
import { expect, test } from '@playwright/test';
import type { Page } from '@playwright/test';
import { Cluster, demoSite } from '../support/cluster/index.js';
import { openControlled, pageScriptSource, workerState } from '../support/webpp-page.js';

let cluster: Cluster;

test.beforeEach(async () => {
  // A round trip on every link, so that a page's load lasts while its images come.
  cluster = await Cluster.start({ site: demoSite(8), delaysMs: { a: 40, b: 40, c: 40 } });
});

test.afterEach(async () => {
  await cluster.stop();
});

interface Spied {
  registers: number;
  posts: { type: string; readyState: string }[];
}

/** Counts the page's register() calls and its messages to the worker, with the document's readyState when each was posted. */
async function spyOnPageScript(page: Page): Promise<void> {
  await page.addInitScript(() => {
    const spied = { registers: 0, posts: [] as { type: string; readyState: string }[] };
    (window as unknown as { spied: typeof spied }).spied = spied;
    // Wrapped through their descriptors: the originals, called with the page's own `this`.
    const original = (proto: object, name: string): ((...args: unknown[]) => unknown) => Object.getOwnPropertyDescriptor(proto, name)?.value as (...args: unknown[]) => unknown;
    const register = original(ServiceWorkerContainer.prototype, 'register');
    Object.defineProperty(ServiceWorkerContainer.prototype, 'register', {
      value: function (this: ServiceWorkerContainer, ...args: unknown[]) {
        spied.registers++;
        return register.apply(this, args);
      },
    });
    const post = original(ServiceWorker.prototype, 'postMessage');
    Object.defineProperty(ServiceWorker.prototype, 'postMessage', {
      value: function (this: ServiceWorker, ...args: unknown[]) {
        spied.posts.push({ type: String((args[0] as { type?: unknown } | null)?.type), readyState: document.readyState });
        return post.apply(this, args);
      },
    });
  });
}

const spied = (page: Page): Promise<Spied> => page.evaluate(() => (window as unknown as { spied: Spied }).spied);

test('a warm page: its script comes from the worker, and registration and reports wait until load is over', async ({ page }) => {
  await spyOnPageScript(page);
  await openControlled(page, cluster.logicalUrl('/index.html'));
  await page.reload();
  await page.waitForFunction(() => (window as { webpp?: unknown }).webpp !== undefined);
  cluster.primary.clearLog();

  const loads = 4;
  for (let load = 0; load < loads; load++) {
    await page.goto(cluster.logicalUrl(load % 2 ? '/index.html' : '/page2.html'), { waitUntil: 'load' });
    await page.waitForFunction(() => (window as { webpp?: unknown }).webpp !== undefined);
    // The work after load, and the reports as the browser batches the entries.
    await expect.poll(async () => (await spied(page)).posts.some((post) => post.type === 'webpp:timing'), { timeout: 10_000 }).toBe(true);
    const { registers, posts } = await spied(page);
    // Our worker with these options is registered already: no register() again.
    expect(registers, `load ${load}`).toBe(0);
    // Nothing posted to the worker before the page's load (its thread dispatches the page's fetch events).
    expect(posts.filter((post) => post.readyState !== 'complete'), `load ${load}`).toEqual([]);
  }
  // The script came from the worker's copy: the origin was asked for it at most once (the
  // copy's background check, once a minute)…
  expect(cluster.primary.requests('/webpp.js', 'GET').length).toBeLessThanOrEqual(1);
  // …answered by the browser through the worker's static route, with no fetch event (no hop to
  // the worker's thread on the page's path; page-script-cache.ts, routerRule).
  expect(await pageScriptSource(page)).toBe('cache');
  const state = await workerState(page);
  expect(state.counters.pageScriptFromCache).toBe(0);
});

test('without the worker\'s copy, the static route falls back to the network', async ({ page }) => {
  await openControlled(page, cluster.logicalUrl('/index.html'));
  await page.reload();
  await page.waitForFunction(() => (window as { webpp?: unknown }).webpp !== undefined);
  // The copy lost (storage cleared by hand, or an install whose fetch of the script failed).
  expect(await page.evaluate(async () => Promise.all((await caches.keys()).filter((name) => name.startsWith('webpp-page-script-')).map((name) => caches.delete(name))))).toContain(true);
  cluster.primary.clearLog();
  await page.reload({ waitUntil: 'load' });
  await page.waitForFunction(() => (window as { webpp?: unknown }).webpp !== undefined);
  expect(cluster.primary.requests('/webpp.js', 'GET').length).toBeGreaterThanOrEqual(1);
});

test('the page script with a query comes from the worker\'s copy through the fetch event', async ({ page }) => {
  await openControlled(page, cluster.logicalUrl('/index.html'));
  await page.reload();
  cluster.primary.clearLog();
  // The static route covers the plain URL only (the copy is kept under it); the fetch event answers the rest from the same copy.
  const body = await page.evaluate(async () => (await fetch('/webpp.js?v=2')).text());
  expect(body).toContain('webpp');
  expect(cluster.primary.requests('/webpp.js', 'GET').length).toBeLessThanOrEqual(1);
  expect((await workerState(page)).counters.pageScriptFromCache).toBeGreaterThanOrEqual(1);
});

test('other options on the tag still reach the worker: the page script registers the new worker URL', async ({ page }) => {
  await spyOnPageScript(page);
  await openControlled(page, cluster.logicalUrl('/index.html'));
  const scriptUrl = (): Promise<string | undefined> => page.evaluate(async () => (await navigator.serviceWorker.getRegistration())?.active?.scriptURL);
  expect(await scriptUrl()).not.toContain('initialTimeoutMs');

  cluster.workerParams = { initialTimeoutMs: 3000 };
  await page.goto(cluster.logicalUrl('/page2.html'), { waitUntil: 'load' });
  await expect.poll(async () => (await spied(page)).registers, { timeout: 10_000 }).toBe(1);
  await expect.poll(scriptUrl, { timeout: 15_000 }).toContain('initialTimeoutMs=3000');
});

test('a page left for another page of the site: its state write waits for the new page, which asks after its load', async ({ page }) => {
  // Writes only when a page asks (no batch write within the test: _flushDelayMs), so each
  // policy-table write (counters.tableFlushes) is one page's request.
  cluster.workerParams = { _flushDelayMs: 600_000 };
  await spyOnPageScript(page);
  await openControlled(page, cluster.logicalUrl('/index.html'));
  await page.reload();
  await page.waitForFunction(() => (window as { webpp?: unknown }).webpp !== undefined);
  await expect.poll(async () => (await spied(page)).posts.some((post) => post.type === 'webpp:flush'), { timeout: 10_000 }).toBe(true);
  const before = (await workerState(page)).counters.tableFlushes;

  const loads = 4;
  for (let load = 0; load < loads; load++) {
    // The page grew its performance timeline after load (a site's own marks, fetches): it asks
    // for the write when hidden, as the next page replaces it.
    await page.evaluate(() => performance.mark('reading'));
    await page.goto(cluster.logicalUrl(load % 2 ? '/index.html' : '/page2.html'), { waitUntil: 'load' });
    await expect.poll(async () => (await spied(page)).posts.some((post) => post.type === 'webpp:flush'), { timeout: 10_000 }).toBe(true);
    // The new page's request after its load is taken: the table is written.
    await expect.poll(async () => (await workerState(page)).counters.tableFlushes, { timeout: 10_000 }).toBeGreaterThanOrEqual(before + load + 1);
  }
  // One write per new page, after its load; none for the pages left while the next one loaded
  // (before: two per navigation, the left page's in the middle of the new page's load).
  expect((await workerState(page)).counters.tableFlushes - before).toBe(loads);
});
