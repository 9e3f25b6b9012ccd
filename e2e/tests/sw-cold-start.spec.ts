/**
 * A cold worker (stopped, then woken by a navigation) plans with what the stopped one learnt:
 * the site's bindings and the policy's state, restored from IndexedDB before the first
 * request is planned (sw/src/replica-client.ts, restoredInTime). The stop here is DevTools'
 * `ServiceWorker.stopAllWorkers`, which gives the worker no grace, as a browser that quits or
 * is killed gives none: right after a first visit, within the second in which the worker's
 * batched writes (sw/src/_private/persisted-state.ts) had not run yet. The page script asks
 * for the write at the end of each load (sw/src/webpp.ts), so the first visit's learning is
 * kept; before, the woken worker knew no binding and no replica, and sent the page's first
 * burst to b and c, 400 ms slower than a.
 */
import { expect, test } from '@playwright/test';
import { Cluster, demoSite } from '../support/cluster/index.js';
import { openControlled, pageRendered, workerState } from '../support/webpp-page.js';

let cluster: Cluster;

test.afterEach(async () => {
  await cluster.stop();
});

test('after a stop right after the first visit, the woken worker sends the first page load to the fast replica', async ({ page, context }) => {
  // a (the own origin) is clearly the fastest; b and c answer 400 ms later.
  cluster = await Cluster.start({ site: demoSite(4), delaysMs: { a: 0, b: 400, c: 400 } });
  const fast = cluster.replica('a').origin;
  // A first visit: the first load is not controlled yet; two controlled loads (the first
  // observes the page and learns its bindings, the second is bound), then the stop.
  await openControlled(page, cluster.logicalUrl('/index.html'));
  await page.reload();
  await page.reload();
  const warm = await workerState(page);
  expect(warm.decisions.filter((decision) => decision.navigation).at(-1)?.servedBy).toBe(fast);

  const cdp = await context.newCDPSession(page);
  await cdp.send('ServiceWorker.enable');
  await cdp.send('ServiceWorker.stopAllWorkers');
  await page.reload();
  expect(await pageRendered(page)).toMatchObject({ images: 4, brokenImages: 0, styled: true });

  const cold = await workerState(page);
  expect(cold.startedAtMs).toBeGreaterThan(warm.startedAtMs); // a fresh worker
  // Its first decisions, the navigation and the page's burst, all went to a first.
  const first = cold.decisions.slice(0, 6);
  expect(first.map((decision) => decision.logicalUrl.replace(cluster.logicalOrigin, ''))).toEqual(expect.arrayContaining(['/index.html', '/style.css']));
  for (const decision of first) expect({ url: decision.logicalUrl, first: decision.attempts[0]?.server }).toEqual({ url: decision.logicalUrl, first: fast });
  await cdp.detach();
});
