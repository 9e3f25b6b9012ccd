/**
 * Request semantics through the worker: Range and conditional requests, HEAD, cookies
 * (never to another origin), content types, redirects, the HTTP cache, and the remote
 * switch-off.
 */
import { expect, test } from '@playwright/test';
import type { Page } from '@playwright/test';
import { Cluster, demoSite } from '../support/cluster/index.js';
import type { ClusterReplica as Replica, Site } from '../support/cluster/index.js';
import { decisionsAfter, lastDecisionId, openControlled, waitForState, workerState } from '../support/webpp-page.js';

let cluster: Cluster;

function site(): Site {
  return {
    ...demoSite(4),
    '/old.html': { contentType: 'text/html', body: '', redirectTo: '/page2.html' },
    '/cached.json': { contentType: 'application/json', body: '{"cached":true}', cacheControl: 'max-age=600' },
  };
}

async function warmUp(page: Page, fastest: string): Promise<void> {
  await openControlled(page, cluster.logicalUrl('/index.html'));
  const origin = cluster.replica(fastest).origin;
  await waitForState(page, (state) => state.servers.length === 3 && state.decisions.at(-1)?.servedBy === origin, {
    what: `${fastest} preferred`,
    between: async () => void (await page.reload()),
  });
}

test.beforeEach(async () => {
  cluster = await Cluster.start({ site: site(), delaysMs: { a: 150, b: 0, c: 150 } });
});

test.afterEach(async () => {
  await cluster.stop();
});

test('Range and conditional headers reach the replica; partial and 304 answers come back', async ({ page }) => {
  await warmUp(page, 'b');
  const b = cluster.replica('b');
  const result = await page.evaluate(async () => {
    const partial = await fetch('/big.txt', { headers: { range: 'bytes=0-9' } });
    const full = await fetch('/data.json');
    const etag = full.headers.get('etag') ?? '';
    await full.text();
    const conditional = await fetch('/data.json', { headers: { 'if-none-match': etag } });
    return {
      partial: { status: partial.status, range: partial.headers.get('content-range'), body: await partial.text() },
      etag,
      conditionalStatus: conditional.status,
    };
  });
  expect(result.partial).toEqual({ status: 206, range: 'bytes 0-9/1040', body: 'abcdefghij' });
  expect(result.etag).not.toBe('');
  expect(result.conditionalStatus).toBe(304);
  expect(b.requests('/big.txt', 'GET').at(-1)?.headers.range).toBe('bytes=0-9');
  expect(b.requests('/data.json', 'GET').at(-1)?.headers['if-none-match']).toBe(result.etag);
});

test('HEAD requests are bound too', async ({ page }) => {
  await warmUp(page, 'b');
  const before = lastDecisionId(await workerState(page));
  const status = await page.evaluate(async () => (await fetch('/data.json', { method: 'HEAD' })).status);
  expect(status).toBe(200);
  const decision = decisionsAfter(await workerState(page), before).find((d) => d.method === 'HEAD');
  expect(decision).toMatchObject({ logicalUrl: cluster.logicalUrl('/data.json'), servedBy: cluster.replica('b').origin });
  expect(cluster.replica('b').requests('/data.json', 'HEAD').length).toBeGreaterThan(0);
});

test('cookies go to a same-origin replica, never to another origin', async ({ page }) => {
  // Same site, different origins: site.localhost and b.site.localhost. The browser itself
  // would send b's cookie on a credentialed request from the page; the worker must not.
  await cluster.stop();
  cluster = await Cluster.start({
    site: site(),
    names: ['site', 'b.site', 'c.site'],
    delaysMs: { site: 0, 'b.site': 100, 'c.site': 100 },
  });
  const [primary, b, c] = cluster.replicas as [Replica, Replica, Replica];
  for (const replica of [b, c, primary]) await page.goto(replica.url('/set-cookie'));
  await warmUp(page, 'site');
  // The primary (same origin as the page) serves first, with the page's cookies.
  expect(primary.requests('/img/1.png', 'GET').at(-1)?.headers.cookie).toContain('replica-site=secret');

  // Control: the page's own credentialed request to b does carry b's cookie (the browser then
  // rejects the answer, as b allows any origin but no credentials; the request was sent)…
  await page.evaluate((url) => fetch(url, { credentials: 'include' }).catch(() => undefined), b.url('/data.json?direct'));
  const direct = b.requests('/data.json', 'GET').at(-1);
  expect(direct?.headers['sec-fetch-site']).toBe('same-site');
  expect(direct?.headers.cookie).toContain('replica-b.site=secret');

  // …but the worker's requests to b and c never do.
  b.clearLog();
  c.clearLog();
  await primary.kill();
  for (let load = 0; load < 2; load++) {
    await page.reload();
    // app.js fetches /whoami.txt after the load event: wait for it, so each load counts 8.
    await expect(page.locator('#whoami')).not.toBeEmpty();
  }
  const crossOrigin = [...b.log, ...c.log].filter((entry) => entry.method === 'GET');
  expect(crossOrigin.length).toBeGreaterThanOrEqual(2 * 8);
  for (const entry of crossOrigin) expect(entry.headers.cookie).toBeUndefined();
});

test('responses keep their content type and the logical URL', async ({ page }) => {
  await warmUp(page, 'b');
  expect(await page.evaluate(() => document.contentType)).toBe('text/html');
  expect(page.url()).toBe(cluster.logicalUrl('/index.html'));
  const response = await page.evaluate(async () => {
    const r = await fetch('/data.json');
    return { type: r.headers.get('content-type'), url: r.url, json: await r.json() };
  });
  expect(response).toEqual({ type: 'application/json', url: cluster.logicalUrl('/data.json'), json: { items: [1, 2, 3] } });
});

test('a redirect from a replica stays in the logical namespace', async ({ page }) => {
  await warmUp(page, 'b');
  await page.goto(cluster.logicalUrl('/old.html'));
  await expect(page.locator('#title')).toHaveText('Page two');
  expect(page.url()).toBe(cluster.logicalUrl('/page2.html'));
  expect(cluster.replica('b').requests('/old.html', 'GET').length).toBe(1);

  const viaFetch = await page.evaluate(async () => {
    const r = await fetch('/old.html');
    return { status: r.status, text: await r.text() };
  });
  expect(viaFetch.status).toBe(200);
  expect(viaFetch.text).toContain('Page two');
});

test('a redirect from a replica while the own origin is down: followed, and mapped into the logical namespace', async ({ page }) => {
  await warmUp(page, 'b');
  // b's redirect is its answer: the page's own request goes to the own origin, which is dead,
  // so the worker follows b's redirect itself and hands the browser the logical target.
  await cluster.replica('a').kill();
  await page.goto(cluster.logicalUrl('/old.html'));
  await expect(page.locator('#title')).toHaveText('Page two');
  expect(page.url()).toBe(cluster.logicalUrl('/page2.html'));
  const state = await workerState(page);
  expect(state.servers.find((server) => server.server === cluster.replica('b').origin)?.state).toBe('available');
});

test('HTTP cache hits are not latency samples', async ({ page }) => {
  await warmUp(page, 'b');
  const before = await workerState(page);
  await page.evaluate(async () => {
    for (let i = 0; i < 3; i++) await (await fetch('/cached.json')).text();
  });
  const after = await waitForState(page, (state) => state.counters.cacheHitsSkipped >= before.counters.cacheHitsSkipped + 2, {
    what: 'two cache hits skipped',
  });
  // Only the one network response was a sample of the server that sent it.
  const served = decisionsAfter(after, lastDecisionId(before)).filter((d) => d.logicalUrl.endsWith('/cached.json'));
  expect(served).toHaveLength(3);
  const networkGets = cluster.replicas.reduce((sum, replica) => sum + replica.requests('/cached.json', 'GET').length, 0);
  expect(networkGets).toBe(1);
});

test('the site switches the worker off remotely with `webpp-control: off`', async ({ page }) => {
  // Only the own origin (a) may switch the worker off; pages come from b, so the worker
  // checks a in the background after each of them (control-check.ts).
  cluster.workerParams = { controlCheckMs: 0 };
  await warmUp(page, 'b');
  cluster.killSwitch = true; // the origin's own kill switch
  await page.reload();
  // The worker unregistered itself and the page script remembers not to register again.
  await expect
    .poll(() => page.evaluate(async () => (await navigator.serviceWorker.getRegistration()) === undefined))
    .toBe(true);
  await expect.poll(() => page.evaluate(() => localStorage.getItem('webpp:off') !== null)).toBe(true);

  const b = cluster.replica('b');
  b.clearLog();
  await page.reload();
  await expect(page.locator('#whoami')).toHaveText('a');
  expect(await page.evaluate(() => navigator.serviceWorker.controller)).toBeNull();
  expect(await page.evaluate(async () => (await navigator.serviceWorker.getRegistration()) === undefined)).toBe(true);
  expect(b.log).toHaveLength(0);
});
