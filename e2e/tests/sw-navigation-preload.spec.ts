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
import type { BrowserContext, Page } from '@playwright/test';
import { Cluster, demoSite } from '../support/cluster/index.js';
import type { RequestLogEntry } from '../support/cluster/request-log.js';
import type { DecisionRecord } from '../support/webpp-page.js';
import { decisionsAfter, lastDecisionId, openControlled, pageRendered, untilNavigationServedBy, waitForState, workerState } from '../support/webpp-page.js';

let cluster: Cluster;

test.afterEach(async () => {
  await cluster.stop();
});

const isPreload = (entry: RequestLogEntry): boolean => entry.headers['service-worker-navigation-preload'] === 'true';

const warmUp = (page: Page, fastest: string): Promise<void> => untilNavigationServedBy(page, cluster.logicalUrl('/index.html'), cluster.replica(fastest).origin);

async function reloadBoundToA(page: Page, context: BrowserContext, start: 'warm' | 'cold'): Promise<{ navigation: DecisionRecord | undefined; pageRequests: boolean[] }> {
  cluster = await Cluster.start({ site: demoSite(2), delaysMs: { a: 0, b: 400, c: 400 } });
  await warmUp(page, 'a');
  const a = cluster.replica('a');
  const cdp = await context.newCDPSession(page);
  await cdp.send('ServiceWorker.enable');
  if (start === 'cold') await cdp.send('ServiceWorker.stopAllWorkers');
  const before = start === 'cold' ? 0 : lastDecisionId(await workerState(page));
  a.clearLog();
  await page.reload();
  expect(await pageRendered(page)).toMatchObject({ images: 2, brokenImages: 0, styled: true });
  const navigation = decisionsAfter(await workerState(page), before).find((decision) => decision.navigation);
  return { navigation, pageRequests: a.requests('/index.html', 'GET').map(isPreload) };
}

for (const start of ['warm', 'cold'] as const) {
  test(`a navigation bound to the own origin is the preload request, sent once (${start} worker)`, async ({ page, context }) => {
    const { pageRequests } = await reloadBoundToA(page, context, start);
    // One request for the page, and it is the browser's preload: the worker did not send its own.
    expect(pageRequests).toEqual([true]);
  });
}

test('a navigation bound to the own origin and served from the preload has its decision record (warm worker)', async ({ page, context }) => {
  const { navigation } = await reloadBoundToA(page, context, 'warm');
  expect(navigation).toMatchObject({ servedBy: cluster.replica('a').origin, outcome: 'served' });
});

// The stop comes right after a first visit: the woken worker knows the page's binding only
// because a first visit's state is written at once (sw/src/_private/persisted-state.ts);
// with the batched write alone it had no bindings, observed the navigation and recorded nothing.
test('a navigation bound to the own origin and served from the preload has its decision record (cold worker)', async ({ page, context }) => {
  const { navigation } = await reloadBoundToA(page, context, 'cold');
  expect(navigation).toMatchObject({ servedBy: cluster.replica('a').origin, outcome: 'served' });
});

test('navigations the worker sends to another replica switch the preload off', async ({ page }) => {
  cluster = await Cluster.start({ site: demoSite(2), delaysMs: { a: 400, b: 0, c: 400 } });
  await warmUp(page, 'b');
  const a = cluster.replica('a');
  // The navigation that found the preload unused switched it off: the next ones ask only b.
  await page.reload();
  // That reload's preload (if it still had one) crosses a's 400 ms emulated link and reaches a
  // after b's page has loaded: let it arrive before the log is cleared (seen flaky in CI).
  await page.waitForTimeout(1_500);
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

test('among equivalent replicas, navigations go to the own origin, so the preload stays on and is used', async ({ page }) => {
  // Three replicas alike (no emulated distance): the policy predicts no gain anywhere. Before,
  // a client drew one of them and kept it (the equivalent set's inertia): in 3 of 5 runs its
  // navigations went to b or c, each one leaving the preload off or unused.
  cluster = await Cluster.start({ site: demoSite(2) });
  const a = cluster.replica('a');
  await openControlled(page, cluster.logicalUrl('/index.html'));
  // Until the worker knows the three and a navigation went to a. On a busy machine the first
  // loads can leave the own origin's estimate behind for a few loads: it served their whole
  // bursts (flaky run: a 602 ms over 11 samples, b 312 ms over 2), so navigations went to b
  // until a refresh of a; the replicas were not yet equivalent to the policy, which is this
  // test's premise (fresh-clone CI failed this test once; 1 of 8 here).
  await waitForState(page, (state) => state.servers.length === 3 && state.decisions.filter((decision) => decision.navigation).at(-1)?.attempts[0]?.server === a.origin, {
    what: 'three replicas known and a navigation to the own origin',
    between: async () => void (await page.reload()),
  });
  await page.reload(); // the preload is on again after a navigation to the own origin
  a.clearLog();
  const before = lastDecisionId(await workerState(page));
  const loads = 6;
  for (let load = 0; load < loads; load++) await page.reload();
  const navigations = decisionsAfter(await workerState(page), before).filter((decision) => decision.navigation);
  expect(navigations).toHaveLength(loads);
  // One navigation may still go elsewhere: a busy moment of a (these servers share the test's
  // event loop) can put it behind by more than the spread of its first bytes.
  const toA = navigations.filter((decision) => decision.attempts[0]?.server === a.origin).length;
  expect(toA).toBeGreaterThanOrEqual(loads - 1);
  // The pages a served were the browser's preload requests (one navigation elsewhere switches it off for the next).
  expect(a.requests('/index.html', 'GET').filter(isPreload).length).toBeGreaterThanOrEqual(loads - 2);
});

test('warm navigations served from the preload do not wait behind the earlier ones', async ({ page }) => {
  // The worker's Resource Timing entries end its exchanges in the engine's in-flight ledger,
  // and a preload's answer has none there: each navigation stayed "in flight" for a minute,
  // and from the seventh on the own origin looked busy with six, so late binding held every
  // navigation for its whole first timeout (0.5–1.5 s) before it sent it (to the preload).
  cluster = await Cluster.start({ site: demoSite(2), delaysMs: { a: 0, b: 400, c: 400 } });
  await warmUp(page, 'a');
  const a = cluster.replica('a');
  const before = lastDecisionId(await workerState(page));
  const loads = 10;
  a.clearLog();
  // Followed links to pages of the site (a reload's request is no-cache: the worker then sends
  // its own, not the preload's); a later request of the worker's own for the same URL would end
  // that URL's exchange, so each page is another URL.
  for (let load = 0; load < loads; load++) await page.goto(cluster.logicalUrl(`/index.html?page=${load}`));
  const navigations = decisionsAfter(await workerState(page), before).filter((decision) => decision.navigation);
  expect(navigations).toHaveLength(loads);
  // Served from the preload: the own origin saw only the browser's preload requests for the page.
  expect(a.requests('/index.html', 'GET').map(isPreload)).toEqual(Array.from({ length: loads }, () => true));
  // Held, a navigation is answered no sooner than its first attempt's timeout (500 ms or more:
  // 555–1,003 ms seen); sent at once, within a few tens of ms (220 ms once on a loaded machine).
  const held = navigations.filter((decision) => decision.totalMs >= 0.9 * (decision.attempts[0]?.timeoutMs ?? 0));
  expect(held.map((decision) => [decision.totalMs, decision.attempts[0]?.timeoutMs])).toEqual([]);
});
