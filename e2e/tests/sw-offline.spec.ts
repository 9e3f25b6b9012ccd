/**
 * Offline copies in Chromium: a visitor loads a few pages of a site served by three real
 * @webpp/origin replicas, then every replica (the site's own origin among them) stops.
 * Pages already visited still render from the worker's saved copies, with their CSS and
 * images; a page never visited gets the readable error page; the page is told it sees a
 * saved copy (header, live event, state).
 */
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, test, type Page } from '@playwright/test';
import { Cluster, PIXEL_PNG } from '../support/cluster/index.js';
import { flushWorker, openControlled, pageRendered, waitForState, workerState } from '../support/webpp-page.js';

/** Entries of the batch layer's logical-URL cache (sw/src/batch/batch-stage.ts answers 'webpp:batch-state'). */
function batchCacheEntries(page: Page): Promise<number> {
  return page.evaluate(
    () =>
      new Promise<number>((resolve, reject) => {
        const controller = navigator.serviceWorker.controller;
        if (!controller) return reject(new Error('page not controlled'));
        const channel = new MessageChannel();
        channel.port1.onmessage = (message) => resolve((message.data as { cache: { entries: number } }).cache.entries);
        controller.postMessage({ type: 'webpp:batch-state' }, [channel.port2]);
      }),
  );
}

let root: string;
let cluster: Cluster;

function page(title: string, images: number[]): string {
  return (
    `<!doctype html><html><head><meta charset="utf-8"><title>${title}</title>` +
    // Offline copies are opt-in. The batch add-on is on in both runs, as before it was always there: without the origin's
    // batching it asks once and is told no.
    `<script src="/webpp.js" data-features="batch,offline" async></script><link rel="stylesheet" href="/style.css"></head>` +
    `<body><h1 id="title">${title}</h1>${images.map((i) => `<img src="img/${i}.png" alt="" width="1" height="1">`).join('')}` +
    `<a id="next" href="about.html">about</a><script src="/app.js"></script></body></html>`
  );
}

test.beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), 'webpp-offline-'));
  mkdirSync(join(root, 'img'));
  writeFileSync(join(root, 'index.html'), page('Gallery', [1, 2, 3]));
  writeFileSync(join(root, 'about.html'), page('About', [3, 4]));
  writeFileSync(join(root, 'never.html'), page('Never visited', [1]));
  writeFileSync(join(root, 'style.css'), 'h1 { color: rgb(10, 20, 30); }');
  writeFileSync(join(root, 'app.js'), 'window.appLoaded = true;');
  for (const i of [1, 2, 3, 4]) writeFileSync(join(root, 'img', `${i}.png`), PIXEL_PNG);
});

test.afterAll(() => {
  rmSync(root, { recursive: true, force: true });
});

test.afterEach(async () => {
  await cluster.stop();
});

// With the origin's batch transmission the page and its resources arrive in batches, which
// the batch layer's own cache keeps: they must serve offline just the same.
for (const batch of [false, true]) {
  test(`every replica and the origin down: visited pages render from saved copies, others get the error page${batch ? ' (batching)' : ''}`, async ({ page }) => {
    cluster = await Cluster.start({ root, origin: { batch } });
    await openControlled(page, cluster.logicalUrl('/index.html'));
    await page.reload(); // now through the worker, which learnt the bindings on the first load
    expect(await pageRendered(page)).toEqual({ images: 3, brokenImages: 0, styled: true, scripted: true });
    await page.goto(cluster.logicalUrl('/about.html'));
    expect(await pageRendered(page)).toEqual({ images: 2, brokenImages: 0, styled: true, scripted: true });
    // index, about, style.css, app.js, img 1-4: saved in the background (waitUntil); with
    // batching the two pages are, and the batch layer's cache holds the rest.
    const saved = await waitForState(page, (state) => state.offline.entries >= (batch ? 2 : 8), { what: 'offline copies' });
    expect(saved.offline.servedFromCache).toBe(0);
    if (batch) await expect.poll(() => batchCacheEntries(page), { timeout: 20_000 }).toBeGreaterThanOrEqual(6);
    await flushWorker(page);

    for (const replica of cluster.replicas) await cluster.kill(replica.name);

    // A visited page, reloaded: its saved copy, marked as such, with CSS and images.
    const reloaded = await page.goto(cluster.logicalUrl('/index.html'));
    expect(reloaded?.status()).toBe(200);
    expect(Date.parse(reloaded?.headers()['webpp-offline-copy'] ?? '')).toBeGreaterThan(Date.now() - 5 * 60_000);
    await expect(page.locator('#title')).toHaveText('Gallery');
    expect(await pageRendered(page)).toEqual({ images: 3, brokenImages: 0, styled: true, scripted: true });

    // Following a link to another visited page.
    await page.click('#next');
    await expect(page.locator('#title')).toHaveText('About');
    expect(await pageRendered(page)).toEqual({ images: 2, brokenImages: 0, styled: true, scripted: true });

    // The page is told: window.webpp (its script from the worker's copy) reports the state and live events.
    await page.waitForFunction(() => (window as { webpp?: unknown }).webpp !== undefined, undefined, { timeout: 10_000 });
    const state = await workerState(page);
    // 2 pages, 2 × (css, js), 5 images; with batching the batch layer serves what it holds as
    // fresh (a validated window) without trying the network, and only the pages are copies.
    expect(state.offline.servedFromCache).toBeGreaterThanOrEqual(batch ? 2 : 8);
    expect(state.counters.offlineCopies).toBe(state.offline.servedFromCache);
    expect(state.offline.lastAtMs).not.toBeNull();
    expect(state.events).toContainEqual(
      expect.objectContaining({ type: 'offline-copy', logicalUrl: cluster.logicalUrl('/about.html'), savedAtMs: expect.any(Number) }),
    );
    // A new subscriber also gets the events of the last 2 s (the page's own copies among
    // them): wait for the stylesheet's.
    const live = await page.evaluate(async () => {
      const api = (window as unknown as { webpp: { on(type: string, listener: (event: { logicalUrl?: string }) => void): () => void } }).webpp;
      const event = new Promise((resolve) => api.on('offline-copy', (received) => received.logicalUrl?.endsWith('/style.css') && resolve(received)));
      const response = await fetch('/style.css', { cache: 'reload' });
      return { event: await event, header: response.headers.get('webpp-offline-copy'), text: await response.text() };
    });
    expect(live.text).toContain('rgb(10, 20, 30)');
    expect(live.header).not.toBeNull();
    expect(live.event).toMatchObject({ type: 'offline-copy', logicalUrl: cluster.logicalUrl('/style.css') });

    // A page never visited: the readable error page, listing the replicas tried.
    const never = await page.goto(cluster.logicalUrl('/never.html'));
    expect(never?.status()).toBe(502);
    await expect(page.locator('h1')).toHaveText('This page is unavailable right now');
    await expect(page.locator('#webpp-attempts tbody tr')).toHaveCount(3);
  });
}
