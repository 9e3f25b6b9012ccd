/**
 * A site owner's own site behind three real @webpp/origin replicas (e2e/support/owner-site.ts),
 * used in Chromium as its visitors would: everything the page does must work as it does
 * without webpp.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, test } from '@playwright/test';
import type { Page } from '@playwright/test';
import { Cluster, PIXEL_PNG } from '../support/cluster/index.js';
import { ownerRoutes, ownerSite } from '../support/owner-site.js';
import { PlainStaticServer } from '../support/plain-static-server.js';
import { openControlled, waitForState, workerState } from '../support/webpp-page.js';

let cluster: Cluster;
let cdn: PlainStaticServer;

test.beforeAll(async () => {
  // A CDN that knows nothing of webpp and sends no CORS headers.
  cdn = new PlainStaticServer({ host: 'cdn.localhost' });
  cdn.root = mkdtempSync(join(tmpdir(), 'webpp-owner-cdn-'));
  writeFileSync(join(cdn.root, 'pic.png'), PIXEL_PNG);
  writeFileSync(join(cdn.root, 'landing.html'), '<!doctype html><title>cdn</title><h1 id="title">On the CDN</h1>');
  await cdn.start();
});

test.afterAll(async () => {
  await cdn.stop();
  rmSync(cdn.root, { recursive: true, force: true });
});

async function startCluster(delaysMs: Record<string, number>, dataAttributes?: string): Promise<void> {
  cluster = await Cluster.start({ site: ownerSite(cdn.origin, dataAttributes), delaysMs, afterPlugin: (app, name) => ownerRoutes(app, name, cdn.origin, dataAttributes) });
}

test.afterEach(async () => {
  await cluster.stop();
});

/** Loads a page until the worker has bound it to `name`'s replica. */
async function warmUp(page: Page, name: string, path = '/index.html'): Promise<void> {
  await openControlled(page, cluster.logicalUrl(path));
  const origin = cluster.replica(name).origin;
  await waitForState(page, (state) => state.decisions.some((d) => d.logicalUrl === cluster.logicalUrl(path) && d.servedBy === origin), {
    what: `${path} bound to ${name}`,
    between: async () => void (await page.reload()),
  });
}

test('a bound URL that the site redirects to another host: the page follows it, as without the worker', async ({ page }) => {
  await startCluster({ a: 0, b: 150, c: 150 });
  await warmUp(page, 'a');
  // An image whose URL redirects to a CDN without CORS (the image is the CDN's).
  await page.reload();
  await page.waitForFunction(() => (document.getElementById('moved-away') as HTMLImageElement).complete);
  expect(await page.evaluate(() => (document.getElementById('moved-away') as HTMLImageElement).naturalWidth)).toBe(1);
  // A link to a sign-in or download on another host: the browser lands there.
  const response = await page.goto(cluster.logicalUrl('/go/elsewhere'));
  expect(response?.status()).toBe(200);
  expect(page.url()).toBe(`${cdn.origin}/landing.html`);
  await expect(page.locator('#title')).toHaveText('On the CDN');
  // A redirect is an answer: the site's own origin stays available in the worker's table.
  await page.goto(cluster.logicalUrl('/index.html'));
  const state = await workerState(page);
  expect(state.servers.find((server) => server.server === cluster.replica('a').origin)?.state).toBe('available');
});

test('an image the fastest replica answers with a redirect to a CDN without CORS: the image loads, and no replica is marked failed', async ({ page }) => {
  await startCluster({ a: 150, b: 0, c: 150 });
  const b = cluster.replica('b');
  const image = '/go/pic-elsewhere';
  const imageLoaded = async (): Promise<number> => {
    await page.waitForFunction(() => (document.getElementById('moved-away') as HTMLImageElement).complete);
    return page.evaluate(() => (document.getElementById('moved-away') as HTMLImageElement).naturalWidth);
  };
  // Loads of the page until b, the fastest, was asked for the image itself (before: b's redirect
  // was followed to the CDN in CORS mode, failed there, and b was marked failed).
  await openControlled(page, cluster.logicalUrl('/index.html'));
  await waitForState(page, () => b.requests(image, 'GET').length > 0, { what: 'b asked for the redirecting image', between: async () => void (await page.reload()) });
  await page.reload();
  expect(await imageLoaded()).toBe(1);
  const state = await workerState(page);
  expect(state.events.filter((event) => event.type === 'server-failed')).toEqual([]);
  for (const replica of cluster.replicas) expect(state.servers.find((server) => server.server === replica.origin)?.state, replica.name).toBe('available');
  // The own origin answered the page's own request (its redirect, followed by the browser).
  expect(cluster.replica('a').requests(image, 'GET').length).toBeGreaterThan(0);
  // The worker remembers that the URL redirects: later loads leave it to the browser at once.
  const askedOfReplicas = (): number => b.requests(image, 'GET').length + cluster.replica('c').requests(image, 'GET').length;
  const asked = askedOfReplicas();
  await page.reload();
  expect(await imageLoaded()).toBe(1);
  expect(askedOfReplicas()).toBe(asked);
  // A link to a sign-in on another host, which b answers first: the browser lands there, and b stays available.
  const landing = await page.goto(cluster.logicalUrl('/go/elsewhere'));
  expect(landing?.status()).toBe(200);
  expect(page.url()).toBe(`${cdn.origin}/landing.html`);
  expect(b.requests('/go/elsewhere', 'GET').length).toBeGreaterThan(0);
  await page.goto(cluster.logicalUrl('/index.html'));
  const after = await workerState(page);
  expect(after.events.filter((event) => event.type === 'server-failed')).toEqual([]);
  expect(after.counters.redirectsFromOwnOrigin).toBeGreaterThanOrEqual(2);
});

test('background refreshes of a URL that redirects off-site keep the replicas available', async ({ page }) => {
  // The paper's Refresh policy refreshes the replica whose entry is oldest beyond the TTL.
  await startCluster({ a: 0, b: 100, c: 100 }, 'data-policy="fast" data-_ttl-ms="300"');
  await warmUp(page, 'a');
  // The internal override on the tag (data-_ttl-ms) reached the worker; no option was refused.
  const started = await workerState(page);
  expect(started.config.ttlMs).toBe(300);
  expect(started.configErrors).toEqual([]);
  // A redirecting URL no page of the site loads: one a replica answered the page with is not
  // bound any more (its requests go to the own origin), so it would have no refreshes.
  const redirecting = cluster.logicalUrl('/go/elsewhere');
  const others = [cluster.replica('b').origin, cluster.replica('c').origin];
  // Each bound request lets the policy refresh another replica of it in the background.
  const state = await waitForState(page, (s) => s.events.some((e) => e.type === 'refresh' && others.includes(e.server) && e.url.endsWith('/go/elsewhere')), {
    what: 'a refresh of the redirecting URL on b or c',
    between: async () => void (await page.evaluate((url) => fetch(url, { mode: 'no-cors' }).then(() => undefined), redirecting)),
  });
  const refreshes = state.events.filter((e) => e.type === 'refresh' && e.url.endsWith('/go/elsewhere'));
  expect(refreshes.length).toBeGreaterThan(0);
  // The redirect is b's and c's answer (before: followed to the CDN, which sends no CORS
  // headers, so the refresh failed and marked the replica failed).
  for (const refresh of refreshes) expect(refresh).toMatchObject({ ok: true });
});

test('a signed-in page under a wildcard binding: the visitor stays signed in, and no cookie leaves the origin', async ({ page }) => {
  await startCluster({ a: 150, b: 0, c: 150 });
  await warmUp(page, 'b', '/signin.html');
  await page.click('#login button'); // POST /login (passes the worker), 303 to /account
  await expect(page.locator('#title')).toHaveText('Signed in');
  expect(page.url()).toBe(cluster.logicalUrl('/account'));
  await page.goto(cluster.logicalUrl('/account'));
  await expect(page.locator('#title')).toHaveText('Signed in');
  const state = await workerState(page);
  expect(state.servers.find((server) => server.server === cluster.replica('b').origin)?.state).toBe('available');
  expect(state.counters.personalFromOwnOrigin).toBeGreaterThanOrEqual(1);
  for (const name of ['b', 'c']) for (const entry of cluster.replica(name).log) expect(entry.headers.cookie).toBeUndefined();
});

test('no storage for the site (a quota of 1 byte): the worker installs, binds and serves from memory', async ({ page, context }) => {
  await startCluster({ a: 100, b: 0, c: 100 });
  // IndexedDB and Cache Storage writes fail with QuotaExceededError from the first one on.
  const cdp = await context.newCDPSession(page);
  await cdp.send('Storage.overrideQuotaForOrigin', { origin: cluster.logicalOrigin, quotaSize: 1 });
  await warmUp(page, 'b');
  // The page's own write fails as the worker's do.
  const write = await page.evaluate(async () =>
    (await caches.open('quota-check')).put('/quota-check', new Response('x'.repeat(65_536))).then(
      () => 'stored',
      (error: unknown) => (error as Error).name,
    ),
  );
  expect(write).toBe('QuotaExceededError');
  await page.reload();
  await page.waitForFunction(() => [...document.images].every((image) => image.complete));
  const images = await page.evaluate(() => ({ srcset: (document.getElementById('srcset') as HTMLImageElement).naturalWidth, title: getComputedStyle(document.getElementById('title')!).color }));
  expect(images).toEqual({ srcset: 1, title: 'rgb(10, 20, 30)' });
  const state = await workerState(page);
  expect(state.counters.internalErrors).toBe(0);
  expect(state.decisions.filter((d) => d.servedBy === cluster.replica('b').origin).length).toBeGreaterThan(0);
});

test('server-sent events with silences longer than the timeout: one stream, every event, no replica failed', async ({ page }) => {
  await startCluster({ a: 150, b: 0, c: 150 });
  await warmUp(page, 'b', '/signin.html');
  const received = await page.evaluate(
    () =>
      new Promise<string[]>((resolve) => {
        const got: string[] = [];
        const source = new EventSource('/events');
        source.onmessage = (event) => got.push(String(event.data));
        source.onerror = () => got.push('error');
        setTimeout(() => (source.close(), resolve(got)), 8_000);
      }),
  );
  expect(received).toHaveLength(3);
  const from = received[0]!.split('-')[0]!;
  expect(received).toEqual([`${from}-0`, `${from}-1`, `${from}-2`]);
  const state = await workerState(page);
  expect(state.events.filter((e) => e.type === 'server-failed' || e.type === 'body-resumed')).toEqual([]);
  for (const replica of cluster.replicas) for (const entry of replica.requests('/events', 'GET')) expect(entry.headers.range).toBeUndefined();
});

test("a replica's 404 and 204 are answers: the page gets them, and no replica is marked failed", async ({ page }) => {
  await startCluster({ a: 150, b: 0, c: 150 });
  await warmUp(page, 'b');
  // The servers are compared before and after the two requests (the warm-up is not this test's subject).
  const before = await workerState(page);
  const stateOf = (state: typeof before, name: string) => state.servers.find((server) => server.server === cluster.replica(name).origin)?.state;
  const sinceMs = Date.now();
  // A missing file under the wildcard binding, and an empty answer, both from b first.
  const statuses = await page.evaluate(async () => [(await fetch('/nope.json')).status, (await fetch('/api/empty')).status]);
  expect(statuses).toEqual([404, 204]);
  const state = await workerState(page);
  expect(state.events.filter((event) => event.type === 'server-failed' && event.atMs >= sinceMs)).toEqual([]);
  for (const name of ['a', 'b', 'c']) {
    if (stateOf(before, name) === 'available') expect(stateOf(state, name), name).toBe('available');
  }
  // b answered them itself (with CORS headers on every status, its 404 is readable).
  const asked = cluster.replica('b').log.map((entry) => entry.url);
  expect(asked).toEqual(expect.arrayContaining(['/nope.json', '/api/empty']));
});
