/**
 * A cold worker's navigation (sw/src/cold-navigation.ts): the worker stopped (DevTools'
 * `ServiceWorker.stopAllWorkers`, as Chromium stops an idle one after about 30 s), the next
 * navigation starts it, and the browser's navigation preload brings the own origin's answer
 * while the worker reads its stored state from IndexedDB. The page gets that answer without
 * waiting for the read when it comes first and serves; a preload that fails, hangs or answers
 * 5xx leaves the navigation to the worker's plan and its failover, as before.
 *
 * The read is made slow here by another tab of the site holding a write transaction on the
 * worker's object store (IndexedDB runs the worker's read after it): a stalled disk or a busy
 * database, as a real visitor may have.
 */
import { expect, test } from '@playwright/test';
import type { BrowserContext, Page } from '@playwright/test';
import { Cluster, demoSite } from '../support/cluster/index.js';
import { flushWorker, pageRendered, untilNavigationServedBy, workerState } from '../support/webpp-page.js';

const IMAGES = 2;
/** How long the other tab holds the worker's store: below the worker's 1 s bound on the read (replica-client.ts, RESTORE_WAIT_MS). */
const HOLD_MS = 800;

let cluster: Cluster;

test.afterEach(async () => {
  await cluster.stop();
});

/** Loads until the worker knows the three replicas and a navigation went to `fastest`; its state is written. */
async function warmUp(page: Page, fastest: string): Promise<void> {
  await untilNavigationServedBy(page, cluster.logicalUrl('/index.html'), cluster.replica(fastest).origin);
  await flushWorker(page);
}

async function stopWorker(context: BrowserContext, page: Page): Promise<void> {
  const cdp = await context.newCDPSession(page);
  const status = new Map<string, string>();
  cdp.on('ServiceWorker.workerVersionUpdated', (event: { versions: { versionId: string; runningStatus: string }[] }) => {
    for (const version of event.versions) status.set(version.versionId, version.runningStatus);
  });
  await cdp.send('ServiceWorker.enable');
  await cdp.send('ServiceWorker.stopAllWorkers');
  for (const deadlineMs = Date.now() + 5_000; [...status.values()].some((running) => running !== 'stopped') && Date.now() < deadlineMs; ) await page.waitForTimeout(20);
  await cdp.detach();
}

/**
 * Another tab of the site holds a write transaction on the worker's store ('webpp'/'state')
 * for `holdMs`: resolves once it holds it. The transaction is kept open by chaining reads.
 */
function holdStore(other: Page, holdMs: number): Promise<void> {
  return other.evaluate(
    (ms) =>
      new Promise<void>((resolve, reject) => {
        const open = indexedDB.open('webpp');
        open.onerror = () => reject(open.error ?? new Error('open failed'));
        open.onsuccess = () => {
          const db = open.result;
          const store = db.transaction('state', 'readwrite').objectStore('state');
          const untilMs = performance.now() + ms;
          const next = (): void => {
            const read = store.get('control');
            read.onsuccess = () => {
              if (performance.now() < untilMs) next();
            };
          };
          const first = store.get('control');
          first.onsuccess = () => {
            resolve();
            next();
          };
          store.transaction.oncomplete = () => db.close();
        };
      }),
    holdMs,
  );
}

/** The page's navigation: its fetch to its answer's head (Navigation Timing), and its decision record's reason. */
async function navigationTiming(page: Page): Promise<{ responseMs: number }> {
  return page.evaluate(() => {
    const nav = performance.getEntriesByType('navigation')[0] as PerformanceNavigationTiming;
    return { responseMs: nav.responseStart - nav.fetchStart };
  });
}

test('a cold worker gives the page the preload\'s answer without waiting for its stored state', async ({ page, context }) => {
  cluster = await Cluster.start({ site: demoSite(IMAGES), delaysMs: { a: 0, b: 400, c: 400 } });
  await warmUp(page, 'a');
  const other = await context.newPage();
  await other.goto(cluster.logicalUrl('/page2.html'));
  await stopWorker(context, page);
  await holdStore(other, HOLD_MS);
  const startedMs = Date.now();
  await page.reload();
  const { responseMs } = await navigationTiming(page);
  // Before: the navigation waited for the read, behind the other tab's transaction (≥ 600 ms).
  expect(responseMs).toBeLessThan(HOLD_MS / 2);
  expect(await pageRendered(page)).toMatchObject({ images: IMAGES, brokenImages: 0, styled: true });
  // What it taught was learnt once the state was there: its decision (served by a, from the preload).
  const state = await workerState(page);
  expect(state.startedAtMs).toBeGreaterThanOrEqual(startedMs - 1_000); // a fresh worker
  const navigation = state.decisions.find((decision) => decision.navigation);
  expect(navigation).toMatchObject({ servedBy: cluster.replica('a').origin, outcome: 'served' });
  expect(navigation?.attempts[0]?.reason).toBe('preload-before-restore');
  await other.close();
});

for (const fault of ['killed', 'hanging', 'answering 503'] as const) {
  test(`a cold worker whose own origin is ${fault}: the navigation fails over, the page intact`, async ({ page, context }) => {
    cluster = await Cluster.start({ site: demoSite(IMAGES), delaysMs: { a: 0, b: 50, c: 50 } });
    await warmUp(page, 'a');
    const a = cluster.replica('a');
    await stopWorker(context, page);
    if (fault === 'killed') await a.kill();
    else if (fault === 'hanging') a.stall();
    else a.forcedStatus = 503;
    await page.reload();
    expect(await pageRendered(page)).toMatchObject({ images: IMAGES, brokenImages: 0, styled: true });
    const state = await workerState(page);
    const navigation = state.decisions.find((decision) => decision.navigation);
    expect([cluster.replica('b').origin, cluster.replica('c').origin]).toContain(navigation?.servedBy);
  });
}
