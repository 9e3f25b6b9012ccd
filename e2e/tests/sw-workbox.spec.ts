/**
 * The Workbox integration path: a site's own Workbox worker registers ReplicaStrategy with
 * replicaRouteMatcher. Binding and failover work as in the bundled worker, and the site's
 * Workbox plugins see every request sent to a replica.
 */
import { expect, test } from '@playwright/test';
import type { Page } from '@playwright/test';
import { Cluster, demoSite } from '../support/cluster/index.js';
import { bundleSiteWorker } from '../support/site-worker-bundle.js';
import type { WorkerStateSnapshot } from '../support/webpp-page.js';

let cluster: Cluster;
let workerSource: string;

test.beforeAll(async () => {
  workerSource = await bundleSiteWorker(new URL('../support/workbox-site-sw.ts', import.meta.url));
});

test.beforeEach(async () => {
  const site = demoSite(4);
  site['/site-sw.js'] = { contentType: 'text/javascript', body: () => workerSource, cacheControl: 'no-cache' };
  cluster = await Cluster.start({
    site,
    delaysMs: { a: 150, b: 0, c: 150 },
    pageScript: `<script>navigator.serviceWorker.register('/site-sw.js')</script>`,
    // The site runs its own Workbox worker: the origin must not add the webpp page script.
    origin: { injectScript: false },
  });
});

test.afterEach(async () => {
  await cluster.stop();
});

function ask<T>(page: Page, type: string): Promise<T> {
  return page.evaluate(
    (messageType) =>
      new Promise<T>((resolve, reject) => {
        const worker = navigator.serviceWorker.controller;
        if (!worker) return reject(new Error('not controlled'));
        const channel = new MessageChannel();
        channel.port1.onmessage = (event) => resolve(event.data as T);
        worker.postMessage({ type: messageType }, [channel.port2]);
      }),
    type,
  );
}

test('ReplicaStrategy binds to the fast replica, fails over, and keeps Workbox plugins working', async ({ page }) => {
  await page.goto(cluster.logicalUrl('/index.html'));
  await page.waitForFunction(() => navigator.serviceWorker.controller !== null);
  const b = cluster.replica('b');
  const deadline = Date.now() + 20_000;
  let state = await ask<WorkerStateSnapshot>(page, 'webpp:state');
  while (state.decisions.at(-1)?.servedBy !== b.origin) {
    expect(Date.now()).toBeLessThan(deadline);
    await page.reload();
    state = await ask<WorkerStateSnapshot>(page, 'webpp:state');
  }
  await expect(page.locator('#whoami')).toHaveText('b');
  // The site's plugin tagged the physical requests the strategy sent.
  const gets = b.requests(undefined, 'GET');
  expect(gets.length).toBeGreaterThan(0);
  for (const entry of gets) expect(entry.headers['accept-language']).toBe('x-site-plugin');
  // Every fetch the strategy sent got its plugin callbacks and succeeded: read once none is in
  // flight (a background refresh may have started just before the page settled: seen in CI,
  // 16 sent and 15 succeeded at the moment of asking).
  await expect
    .poll(async () => {
      const calls = await ask<Record<string, number>>(page, 'plugin-calls');
      return calls.fetchDidSucceed === calls.requestWillFetch;
    }, { timeout: 10_000 })
    .toBe(true);
  const calls = await ask<Record<string, number>>(page, 'plugin-calls');
  expect(calls.requestWillFetch).toBeGreaterThanOrEqual(8);
  expect(calls.handlerDidRespond).toBeGreaterThanOrEqual(8);

  // Failover through handler.fetch: fetchDidFail fires for the dead replica, the page still loads.
  await b.kill();
  await page.reload();
  await expect(page.locator('#whoami')).not.toHaveText('');
  await expect(page.locator('#whoami')).not.toHaveText('b');
  expect(await page.evaluate(() => [...document.images].every((image) => image.naturalWidth > 0))).toBe(true);
  const after = await ask<Record<string, number>>(page, 'plugin-calls');
  expect(after.fetchDidFail).toBeGreaterThan(0);
  state = await ask<WorkerStateSnapshot>(page, 'webpp:state');
  expect(state.servers.find((server) => server.server === b.origin)?.state).toBe('failed');
});
