/**
 * Live events (webpp.on, the dashboard) cost nothing on pages that do not listen: the worker
 * posts on its BroadcastChannel only while a page subscribed (messages.ts EVENTS_SUBSCRIBE),
 * and a page that calls webpp.on() still gets every decision.
 */
import { expect, test } from '@playwright/test';
import { Cluster, demoSite } from '../support/cluster/index.js';
import { openControlled, waitForState, workerState } from '../support/webpp-page.js';

let cluster: Cluster;

test.beforeEach(async () => {
  cluster = await Cluster.start({ site: demoSite(4) });
});

test.afterEach(async () => {
  await cluster.stop();
});

/** Fetches a bound URL from the page `times` times, sequentially. */
async function fetchBound(page: import('@playwright/test').Page, path: string, times: number): Promise<void> {
  await page.evaluate(
    async ({ url, times }) => {
      for (let i = 0; i < times; i++) await (await fetch(`${url}?n=${i}-${Math.random()}`)).arrayBuffer();
    },
    { url: cluster.logicalUrl(path), times },
  );
}

test('no event is posted while no page listens; webpp.on() subscribes and gets the decisions', async ({ page }) => {
  await openControlled(page, cluster.logicalUrl('/index.html'));
  await waitForState(page, (state) => state.bindings.count > 0, { what: 'bindings', between: async () => void (await page.reload()) });
  // A bystander on the channel that never subscribes: it sees whatever the worker posts.
  await page.evaluate(() => {
    const seen: unknown[] = [];
    (window as unknown as { seen: unknown[] }).seen = seen;
    new BroadcastChannel('webpp').onmessage = (message) => {
      if (Array.isArray(message.data)) seen.push(...(message.data as unknown[]));
    };
  });
  // Wait out the backlog window of the worker (2 s) so that the load's own events are old news.
  await page.waitForTimeout(2_500);
  const decisionsBefore = (await workerState(page)).decisions.length;
  await fetchBound(page, '/img/1.png', 5);
  await page.waitForTimeout(300);
  expect((await workerState(page)).decisions.length).toBeGreaterThan(decisionsBefore); // the worker did decide
  expect(await page.evaluate(() => (window as unknown as { seen: unknown[] }).seen.length)).toBe(0);

  // A listener subscribes: the next requests' decisions arrive, also at the bystander.
  await page.evaluate(() => {
    const decisions: string[] = [];
    (window as unknown as { decisions: string[] }).decisions = decisions;
    const webpp = (window as unknown as { webpp: { on(type: string, listener: (event: { type: string; decision?: { logicalUrl: string } }) => void): void } }).webpp;
    webpp.on('decision', (event) => {
      if (event.decision) decisions.push(event.decision.logicalUrl);
    });
  });
  await expect
    .poll(
      async () => {
        await fetchBound(page, '/img/2.png', 1);
        return page.evaluate(() => (window as unknown as { decisions: string[] }).decisions.filter((url) => url.includes('/img/2.png')).length);
      },
      { timeout: 15_000 },
    )
    .toBeGreaterThan(0);
  expect(await page.evaluate(() => (window as unknown as { seen: unknown[] }).seen.length)).toBeGreaterThan(0);
});
