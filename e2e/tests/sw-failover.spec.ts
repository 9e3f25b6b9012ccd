/**
 * Failover (paper Section 4.1, Figure 4): a resource is delivered whenever at least one
 * replica holding it is up. Real servers are killed, stalled, restarted or made to fail.
 */
import { expect, test } from '@playwright/test';
import type { Page } from '@playwright/test';
import { Cluster, demoSite } from '../support/cluster/index.js';
import {
  decisionsAfter,
  lastDecisionId,
  openControlled,
  pageRendered,
  waitForState,
  workerState,
} from '../support/webpp-page.js';

let cluster: Cluster;

const FULL_PAGE = { images: 4, brokenImages: 0, styled: true, scripted: true };

/** Loads the gallery until the worker prefers replica b (no delay; a and c are 150 ms away). */
async function warmUp(page: Page): Promise<void> {
  await openControlled(page, cluster.logicalUrl('/index.html'));
  const fast = cluster.replica('b').origin;
  await waitForState(page, (state) => state.servers.length === 3 && state.decisions.at(-1)?.servedBy === fast, {
    what: 'b preferred',
    between: async () => void (await page.reload()),
  });
}

test.beforeEach(async () => {
  cluster = await Cluster.start({
    site: demoSite(4),
    delaysMs: { a: 150, b: 0, c: 150 },
  });
});

test.afterEach(async () => {
  await cluster.stop();
});

test('killing the serving replica mid-session: every later load succeeds and the failover is visible', async ({ page }) => {
  await warmUp(page);
  const dead = cluster.replica('b');
  const beforeState = await workerState(page);
  const before = lastDecisionId(beforeState);

  await dead.kill();
  for (let load = 0; load < 4; load++) {
    await page.reload();
    expect(await pageRendered(page)).toEqual(FULL_PAGE);
    await expect(page.locator('#whoami')).not.toHaveText('');
    await expect(page.locator('#whoami')).not.toHaveText('b');
  }

  const state = await workerState(page);
  const decisions = decisionsAfter(state, before);
  // Every request either bound (a decision) or, with a and c now equal, left to the own origin a (sw/src/direct.ts).
  expect(decisions.length + state.counters.direct - beforeState.counters.direct).toBeGreaterThanOrEqual(4 * 8);
  expect(decisions.every((decision) => decision.outcome === 'served' && decision.servedBy !== dead.origin)).toBe(true);
  // The first requests after the kill tried b, failed and moved on.
  const failedOver = decisions.filter((decision) => decision.failover);
  expect(failedOver.length).toBeGreaterThan(0);
  expect(failedOver[0]?.attempts[0]).toMatchObject({ server: dead.origin, outcome: 'network-error' });
  expect(state.servers.find((server) => server.server === dead.origin)?.state).toBe('failed');
  expect(state.events.some((event) => event.type === 'failover' && event.from === dead.origin)).toBe(true);
  expect(state.events.some((event) => event.type === 'server-failed' && event.server === dead.origin)).toBe(true);
  expect(state.counters.failed).toBe(0);
});

test('a restarted replica returns to service through the backoff probe', async ({ page }) => {
  await warmUp(page);
  const replica = cluster.replica('b');
  await replica.kill();
  await waitForState(page, (state) => state.servers.some((server) => server.server === replica.origin && server.state === 'failed'), {
    what: 'b marked failed',
    between: async () => void (await page.reload()),
  });

  await replica.start(); // same port: same origin
  replica.clearLog();
  const state = await waitForState(
    page,
    (current) => current.servers.some((server) => server.server === replica.origin && server.state === 'available'),
    { what: 'b available again', timeoutMs: 30_000, between: async () => void (await page.reload()) },
  );
  // It came back through an asynchronous HEAD probe, not through a page request.
  expect(replica.log.some((entry) => entry.method === 'HEAD')).toBe(true);
  expect(state.events.some((event) => event.type === 'probe' && event.server === replica.origin && event.recovered)).toBe(true);
  expect(state.counters.recoveries).toBeGreaterThanOrEqual(1);

  // …and, being the fastest, serves again.
  await waitForState(page, (current) => current.decisions.at(-1)?.servedBy === replica.origin, {
    what: 'b serving again',
    between: async () => void (await page.reload()),
  });
  expect(await pageRendered(page)).toEqual(FULL_PAGE);
});

test('a stalled replica times out at the T-percentile and the request moves on', async ({ page }) => {
  await warmUp(page);
  const stalled = cluster.replica('b');
  const before = lastDecisionId(await workerState(page));
  stalled.stall();
  try {
    await page.reload();
    expect(await pageRendered(page)).toEqual(FULL_PAGE);
    const state = await workerState(page);
    const attempts = decisionsAfter(state, before).flatMap((decision) => decision.attempts);
    expect(attempts.some((attempt) => attempt.server === stalled.origin && attempt.outcome === 'timeout')).toBe(true);
    expect(state.servers.find((server) => server.server === stalled.origin)?.state).toBe('failed');
    expect(decisionsAfter(state, before).every((decision) => decision.outcome === 'served')).toBe(true);
  } finally {
    stalled.release();
  }
});

test('5xx answers mark the server failed; 404 answers are stale bindings; the next replica serves', async ({ page }) => {
  await warmUp(page);
  const broken = cluster.replica('b');
  broken.forcedStatus = 503;
  let before = lastDecisionId(await workerState(page));
  await page.reload();
  expect(await pageRendered(page)).toEqual(FULL_PAGE);
  let state = await workerState(page);
  expect(decisionsAfter(state, before).some((d) => d.attempts.some((a) => a.server === broken.origin && a.outcome === 'server-error'))).toBe(true);
  expect(state.servers.find((server) => server.server === broken.origin)?.state).toBe('failed');

  // Now b is healthy but has lost its copies: 404 means "stale binding", not "server down".
  broken.forcedStatus = 404;
  before = lastDecisionId(await workerState(page));
  const staleFromB = (current: typeof state): boolean =>
    decisionsAfter(current, before).some((d) => d.attempts.some((a) => a.server === broken.origin && a.outcome === 'stale'));
  state = await waitForState(page, (current) => staleFromB(current) && current.servers.find((s) => s.server === broken.origin)?.state === 'available', {
    what: 'b probed back, answering 404',
    between: async () => void (await page.reload()),
  });
  expect(await pageRendered(page)).toEqual(FULL_PAGE);
  const decisions = decisionsAfter(state, before);
  expect(decisions.every((decision) => decision.outcome === 'served' && decision.servedBy !== broken.origin)).toBe(true);
  expect(state.counters.staleBindings).toBeGreaterThan(0);
  // 404s are not failures of the server: b is available (its probe answered).
  expect(state.servers.find((server) => server.server === broken.origin)?.state).toBe('available');
});

test('when every replica is down, a navigation shows a readable error page listing what was tried', async ({ page }) => {
  await warmUp(page);
  for (const replica of cluster.replicas) await replica.kill();
  await page.goto(cluster.logicalUrl('/page2.html'));
  await expect(page.locator('h1')).toHaveText('This page is unavailable right now');
  const rows = page.locator('#webpp-attempts tbody tr');
  await expect(rows).toHaveCount(3);
  for (const replica of cluster.replicas) await expect(page.locator('#webpp-attempts')).toContainText(replica.url('/page2.html'));
});
