/**
 * Pages with many resources (bursts). Chromium sends at most six requests at a time to one
 * host, so in a burst most of the worker's fetches wait in the browser's own queue before
 * they reach the replica. That wait says nothing about the replica: the time-to-first-byte
 * samples must leave it out (Resource Timing), and a live replica whose answers are merely
 * queued, or slower than the timeout, must still deliver every resource (paper Section 4.1,
 * Figure 4: a resource is delivered whenever one replica holding it is up).
 */
import { expect, test } from '@playwright/test';
import { Cluster, demoSite } from '../support/cluster/index.js';
import type { Site } from '../support/cluster/index.js';
import { openControlled, pageRendered, waitForState, workerState } from '../support/webpp-page.js';
import type { WorkerStateSnapshot } from '../support/webpp-page.js';

let cluster: Cluster | undefined;

test.afterEach(async () => {
  await cluster?.stop();
  cluster = undefined;
});

/** Every served request has given its sample (or was a cache hit): the table is final. */
function samplesSettled(state: WorkerStateSnapshot): boolean {
  return state.counters.samples + state.counters.cacheHitsSkipped >= state.counters.served;
}

test('queueing in a burst is not a sample: the fast replica keeps an estimate near its own delay', async ({ page }) => {
  test.setTimeout(120_000);
  const IMAGES = 90;
  const FAST_DELAY_MS = 50;
  const SLOW_DELAY_MS = 300;
  const site: Site = demoSite(IMAGES);
  const images = Object.keys(site).filter((path) => path.startsWith('/img/'));
  cluster = await Cluster.start({
    site,
    // The page's own origin (a) holds everything but the images; b and c hold the images.
    delaysMs: { a: 0, b: FAST_DELAY_MS, c: SLOW_DELAY_MS },
    holds: { a: Object.keys(site).filter((path) => !images.includes(path)) },
    // Timeouts far beyond any queue here, so this test sees only the measurement.
    workerParams: { timeoutFloorMs: 8_000, initialTimeoutMs: 8_000, timeoutCeilingMs: 10_000 },
  });
  const fast = cluster.replica('b').origin;

  // 1st load installs the worker; 2nd binds the images (both replicas unknown: random);
  // 3rd binds all 90 at once to the replica the table prefers: six at a time reach it.
  await openControlled(page, cluster.logicalUrl('/index.html'));
  for (let load = 0; load < 2; load++) {
    await page.reload();
    expect((await pageRendered(page)).brokenImages).toBe(0);
    await waitForState(page, samplesSettled, { what: 'every sample recorded' });
  }
  const state = await workerState(page);
  const fastRow = state.servers.find((server) => server.server === fast);
  // Fetch-to-headers times of the last of the 90 include ~15 queue rounds of 50 ms each,
  // well beyond the slow replica's 300 ms; the replica's own time to first byte does not.
  expect(fastRow?.meanMs).toBeLessThan(SLOW_DELAY_MS);
  expect(fastRow?.meanMs).toBeGreaterThanOrEqual(FAST_DELAY_MS * 0.9);
  const lastLoad = state.decisions.filter((decision) => decision.logicalUrl.includes('/img/')).slice(-IMAGES);
  expect(lastLoad.filter((decision) => decision.servedBy === fast).length).toBeGreaterThan(IMAGES / 2);
});

test('every replica slower than the timeout: every resource of the page is still delivered', async ({ page }) => {
  test.setTimeout(120_000);
  const IMAGES = 24;
  cluster = await Cluster.start({
    site: demoSite(IMAGES),
    // All three replicas are up, but each needs 900 ms, three times the 300 ms timeout.
    delaysMs: { a: 900, b: 900, c: 900 },
    workerParams: { timeoutFloorMs: 300, initialTimeoutMs: 300 },
  });

  await openControlled(page, cluster.logicalUrl('/index.html'));
  await page.reload();
  expect(await pageRendered(page)).toEqual({ images: IMAGES, brokenImages: 0, styled: true, scripted: true });
  await expect(page.locator('#whoami')).not.toHaveText('');

  const state = await workerState(page);
  expect(state.counters.bound).toBeGreaterThanOrEqual(IMAGES + 3);
  expect(state.counters.failed).toBe(0);
  expect(state.decisions.every((decision) => decision.outcome === 'served')).toBe(true);
  // The timeouts did fire (the servers were marked failed, other replicas were tried)…
  const attempts = state.decisions.flatMap((decision) => decision.attempts);
  expect(attempts.some((attempt) => attempt.timedOut === true || attempt.outcome === 'timeout')).toBe(true);
  expect(state.events.some((event) => event.type === 'server-failed' && event.outcome === 'timeout')).toBe(true);
});
