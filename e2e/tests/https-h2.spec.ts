/**
 * HTTPS and HTTP/2 (docs/origin.md): three replica servers with the real @webpp/origin
 * plugin on https://<name>.localhost origins, Fastify in its http2 + https mode (ALPN: h2,
 * with HTTP/1.1 fallback). The worker registers on the HTTPS origin, binds to the fastest
 * replica over h2 and fails over when it dies.
 *
 * Trust: the certificate comes from a CA this test makes (origin/test/test-ca.ts). This
 * browser alone accepts it through --ignore-certificate-errors-spki-list=<base64 SHA-256 of
 * the certificate's public key>, which trusts that one key and nothing else. Checked with
 * Chromium 156: with it the worker registers and controls the https:// pages; the broader
 * --ignore-certificate-errors works too; with neither, the first navigation fails with
 * net::ERR_CERT_AUTHORITY_INVALID.
 */
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, test } from '@playwright/test';
import { chromiumArgs, chromiumLaunchOptions } from '../support/chromium.js';
import { Cluster, PIXEL_PNG } from '../support/cluster/index.js';
import { openControlled, pageRendered, waitForState, workerState } from '../support/webpp-page.js';
import { createTestCa } from '../../origin/test/test-ca.js';

const certificate = createTestCa().issue(['a.localhost', 'b.localhost', 'c.localhost', '127.0.0.1']);

test.use({
  launchOptions: { ...chromiumLaunchOptions, args: [...chromiumArgs, `--ignore-certificate-errors-spki-list=${certificate.spkiSha256Base64}`] },
});

let root: string;
let cluster: Cluster;

test.beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), 'webpp-https-site-'));
  mkdirSync(join(root, 'img'));
  const images = [1, 2, 3, 4].map((i) => `<img src="img/${i}.png" alt="" width="1" height="1">`).join('');
  writeFileSync(
    join(root, 'index.html'),
    `<!doctype html><html><head><meta charset="utf-8"><title>https site</title>` +
      `<script src="/webpp.js" async></script><link rel="stylesheet" href="/style.css"></head>` +
      `<body><h1 id="title">Gallery</h1>${images}<script src="/app.js"></script></body></html>`,
  );
  writeFileSync(join(root, 'style.css'), 'h1 { color: rgb(10, 20, 30); }');
  writeFileSync(join(root, 'app.js'), 'window.appLoaded = true;');
  for (const i of [1, 2, 3, 4]) writeFileSync(join(root, 'img', `${i}.png`), PIXEL_PNG);
});

test.afterAll(() => {
  rmSync(root, { recursive: true, force: true });
});

test.beforeEach(async () => {
  cluster = await Cluster.start({ root, delaysMs: { a: 150, b: 0, c: 150 }, tls: { cert: certificate.certPem, key: certificate.keyPem } });
});

test.afterEach(async () => {
  await cluster.stop();
});

test('a worker on an HTTPS origin binds to the fastest HTTPS replica over h2 and fails over', async ({ page }) => {
  const fast = cluster.replica('b');
  expect(cluster.logicalUrl('/')).toMatch(/^https:\/\/a\.localhost:\d+\/$/);
  await openControlled(page, cluster.logicalUrl('/index.html'));
  // The first load, before the worker controls the page, is the browser's own: h2 by ALPN.
  expect(await page.evaluate(() => (performance.getEntriesByType('navigation')[0] as PerformanceNavigationTiming).nextHopProtocol)).toBe('h2');
  expect(await page.evaluate(() => window.isSecureContext && location.protocol)).toBe('https:');

  // The worker's own Resource Timing entries say which protocol each replica answered with.
  const worker = page.context().serviceWorkers().find((candidate) => candidate.url().startsWith(cluster.logicalUrl('/')));
  expect(worker).toBeDefined();
  await worker?.evaluate(() => {
    const scope = self as unknown as { hops: [string, string][] };
    scope.hops = [];
    new PerformanceObserver((list) => {
      for (const entry of list.getEntries()) scope.hops.push([entry.name, (entry as PerformanceResourceTiming).nextHopProtocol]);
    }).observe({ type: 'resource' });
  });

  await waitForState(page, (state) => state.servers.length === 3 && state.decisions.at(-1)?.servedBy === fast.origin, {
    what: 'b preferred',
    between: async () => void (await page.reload()),
  });
  await page.reload();
  expect(await pageRendered(page)).toEqual({ images: 4, brokenImages: 0, styled: true, scripted: true });
  const state = await workerState(page);
  expect(state.decisions.filter((decision) => decision.navigation).at(-1)?.servedBy).toBe(fast.origin);
  // The worker's requests reached b over HTTP/2 (the server saw them as 2.0).
  const imageRequests = fast.log.filter((entry) => entry.url === '/img/1.png');
  expect(imageRequests.length).toBeGreaterThan(0);
  expect(imageRequests.every((entry) => entry.httpVersion === '2.0')).toBe(true);
  const hops = (await worker?.evaluate(() => (self as unknown as { hops: [string, string][] }).hops)) ?? [];
  const fromFast = hops.filter(([name]) => name.startsWith(`${fast.origin}/img/`));
  expect(fromFast.length).toBeGreaterThan(0);
  expect(new Set(fromFast.map(([, protocol]) => protocol))).toEqual(new Set(['h2']));
  // …and the policy learnt it from them: b takes a burst on one multiplexed connection, not six (core queue-ahead.ts).
  await waitForState(page, (snapshot) => snapshot.servers.find((server) => server.server === fast.origin)?.protocol === 'h2', { what: "b's protocol learnt" });

  await cluster.kill('b');
  await page.reload();
  expect(await pageRendered(page)).toEqual({ images: 4, brokenImages: 0, styled: true, scripted: true });
  const after = await workerState(page);
  expect(after.servers.find((server) => server.server === fast.origin)?.state).toBe('failed');
  expect(after.counters.failed).toBe(0);
  const served = after.decisions.filter((decision) => decision.navigation).at(-1)?.servedBy;
  expect([cluster.replica('a').origin, cluster.replica('c').origin]).toContain(served);
});
