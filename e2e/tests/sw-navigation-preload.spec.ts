/**
 * Navigation preload (sw/src/navigation-preload.ts): a navigation the worker would send to
 * the own origin anyway is the browser's preload request, sent while the worker starts; the
 * worker does not send it a second time. A navigation the worker sends to another replica
 * switches the preload off, so the own origin is not asked for pages it does not serve.
 *
 * A preload request carries `Service-Worker-Navigation-Preload: true`; the worker's own
 * requests do not. The replicas' request logs tell the two apart.
 */
import { expect, test } from '@playwright/test';
import type { Page } from '@playwright/test';
import { Cluster, demoSite } from '../support/cluster/index.js';
import type { RequestLogEntry } from '../support/cluster/request-log.js';
import { decisionsAfter, lastDecisionId, openControlled, pageRendered, waitForState, workerState } from '../support/webpp-page.js';

let cluster: Cluster;

test.afterEach(async () => {
  await cluster.stop();
});

const isPreload = (entry: RequestLogEntry): boolean => entry.headers['service-worker-navigation-preload'] === 'true';

async function warmUp(page: Page, fastest: string): Promise<void> {
  await openControlled(page, cluster.logicalUrl('/index.html'));
  const origin = cluster.replica(fastest).origin;
  await waitForState(page, (state) => state.servers.length === 3 && state.decisions.filter((d) => d.navigation).at(-1)?.servedBy === origin, {
    what: `navigations served by ${fastest}`,
    between: async () => void (await page.reload()),
  });
}

test('a navigation bound to the own origin is the preload request, sent once, warm and cold', async ({ page, context }) => {
  cluster = await Cluster.start({ site: demoSite(2), delaysMs: { a: 0, b: 400, c: 400 } });
  await warmUp(page, 'a');
  const a = cluster.replica('a');
  const cdp = await context.newCDPSession(page);
  await cdp.send('ServiceWorker.enable');

  for (const start of ['warm', 'cold'] as const) {
    if (start === 'cold') await cdp.send('ServiceWorker.stopAllWorkers');
    const before = lastDecisionId(await workerState(page));
    a.clearLog();
    await page.reload();
    expect(await pageRendered(page)).toMatchObject({ images: 2, brokenImages: 0, styled: true });
    const navigation = decisionsAfter(await workerState(page), before).find((decision) => decision.navigation);
    expect(navigation, start).toMatchObject({ servedBy: a.origin, outcome: 'served' });
    // One request for the page, and it is the browser's preload: the worker did not send its own.
    const pageRequests = a.requests('/index.html', 'GET');
    expect(pageRequests.map(isPreload), start).toEqual([true]);
  }
});

test('navigations the worker sends to another replica switch the preload off', async ({ page }) => {
  cluster = await Cluster.start({ site: demoSite(2), delaysMs: { a: 400, b: 0, c: 400 } });
  await warmUp(page, 'b');
  const a = cluster.replica('a');
  // The navigation that found the preload unused switched it off: the next ones ask only b.
  await page.reload();
  a.clearLog();
  const before = lastDecisionId(await workerState(page));
  for (let load = 0; load < 2; load++) await page.reload();
  const navigations = decisionsAfter(await workerState(page), before).filter((decision) => decision.navigation);
  expect(navigations).toHaveLength(2);
  // A preload only follows a navigation that went to a first (none, while b stays the fastest by far).
  const firstToA = navigations.filter((decision) => decision.attempts[0]?.target.startsWith(a.origin)).length;
  expect(a.requests('/index.html', 'GET').filter(isPreload).length).toBeLessThanOrEqual(firstToA);
  expect(firstToA).toBeLessThan(2);
});
