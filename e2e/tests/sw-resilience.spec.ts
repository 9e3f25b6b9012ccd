/**
 * Failures the page must not see: a replica that dies while it streams a large body (the
 * worker resumes the body from another replica with a Range request), and a page origin
 * that is down (the page itself comes from a replica, and so must the page script).
 */
import { createHash, randomBytes } from 'node:crypto';
import { expect, test } from '@playwright/test';
import type { Page } from '@playwright/test';
import { Cluster, demoSite } from '../support/cluster/index.js';
import { openControlled, pageRendered, pageScriptSource, waitForState, workerState } from '../support/webpp-page.js';

let cluster: Cluster;

const BIG_BYTES = 500_000;
const big = randomBytes(BIG_BYTES);
const bigSha256 = createHash('sha256').update(big).digest('hex');
/** The strong ETag @webpp/origin gives a stored replica: its content digest. */
const BIG_ETAG = `"sha256-${createHash('sha256').update(big).digest('base64url')}"`;

test.beforeEach(async () => {
  cluster = await Cluster.start({
    site: demoSite(4),
    delaysMs: { a: 150, b: 0, c: 150 },
  });
  // A replica stored through the management API: served by the origin with a strong ETag
  // (@fastify/static's are weak, and a weak validator cannot make a Range request safe).
  await cluster.storeReplica('/big.bin', big, 'application/octet-stream');
});

test.afterEach(async () => {
  await cluster.stop();
});

/** Loads the gallery until the worker prefers replica b (no delay; a and c are 150 ms away). */
async function warmUp(page: Page): Promise<void> {
  await openControlled(page, cluster.logicalUrl('/index.html'));
  const fast = cluster.replica('b').origin;
  await waitForState(page, (state) => state.servers.length === 3 && state.decisions.at(-1)?.servedBy === fast, {
    what: 'b preferred',
    between: async () => void (await page.reload()),
  });
}

/** fetch() in the page: status, length and SHA-256 of the body the page received. */
function fetchDigest(page: Page, path: string): Promise<{ status: number; length: number; sha256: string }> {
  return page.evaluate(async (url) => {
    const response = await fetch(url);
    const bytes = await response.arrayBuffer();
    const digest = await crypto.subtle.digest('SHA-256', bytes);
    const sha256 = [...new Uint8Array(digest)].map((byte) => byte.toString(16).padStart(2, '0')).join('');
    return { status: response.status, length: bytes.byteLength, sha256 };
  }, path);
}

test('a replica that dies mid-body: the body resumes from the next replica with a Range request', async ({ page }) => {
  await warmUp(page);
  const breaking = cluster.replica('b');
  breaking.breakBodyAfterBytes = 200_000;

  expect(await fetchDigest(page, '/big.bin')).toEqual({ status: 200, length: BIG_BYTES, sha256: bigSha256 });

  // b sent the start; another replica sent the rest, asked for by a Range request that
  // names the entity (If-Range: its strong ETag), so a changed file cannot be spliced in.
  // Not the page's: the ranged refreshes (bytes=0-32767) that measure a replica's pace once a
  // large body's head said large resources are in use (core maintenance.ts).
  const pageGets = (replica: (typeof cluster.replicas)[number]) => replica.requests('/big.bin', 'GET').filter((request) => !/^bytes=0-\d+$/.test(String(request.headers.range ?? '')));
  expect(pageGets(breaking)).toHaveLength(1);
  const resumed = cluster.replicas.filter((replica) => replica !== breaking).flatMap(pageGets);
  expect(resumed).toHaveLength(1);
  const range = /^bytes=(\d+)-$/.exec(String(resumed[0]?.headers.range));
  expect(range).not.toBeNull();
  // From the first byte the page did not get (how much arrived before the break is up to the platform).
  expect(Number(range?.[1])).toBeLessThanOrEqual(200_000);
  expect(resumed[0]?.headers['if-range']).toBe(BIG_ETAG);

  const state = await workerState(page);
  expect(state.counters.bodyResumes).toBe(1);
  expect(state.events).toContainEqual(
    expect.objectContaining({ type: 'body-resumed', from: breaking.origin, ok: true, atByte: Number(range?.[1]) }),
  );
  expect(state.servers.find((server) => server.server === breaking.origin)?.state).toBe('failed');
});

test('the page origin is down: the page comes from a replica and window.webpp still works', async ({ page }) => {
  await openControlled(page, cluster.logicalUrl('/index.html'));
  await page.reload(); // learns the bindings

  await cluster.primary.kill();
  await page.goto(cluster.logicalUrl('/page2.html'));
  await expect(page.locator('#title')).toHaveText('Page two');
  await page.waitForFunction(() => (window as { webpp?: unknown }).webpp !== undefined, undefined, { timeout: 10_000 });
  const state = await workerState(page);
  const navigation = state.decisions.findLast((decision) => decision.navigation);
  expect(navigation?.logicalUrl).toBe(cluster.logicalUrl('/page2.html'));
  expect(navigation?.servedBy).not.toBe(cluster.primary.origin);
  // The page script came from the worker's copy (the origin that serves it is down), by its static route.
  expect(await pageScriptSource(page)).toBe('cache');

  // …and the gallery renders completely from the other replicas.
  await page.goto(cluster.logicalUrl('/index.html'));
  expect(await pageRendered(page)).toEqual({ images: 4, brokenImages: 0, styled: true, scripted: true });
});

test('the page origin hangs (a black hole): the page comes from a replica, and its load does not wait on the page script', async ({ page }) => {
  test.setTimeout(120_000);
  await cluster.stop();
  // The page script's old flat wait (the initial timeout) made long here: a load that waits
  // for it cannot end within the 15 s the navigation below is given.
  cluster = await Cluster.start({ site: demoSite(4), delaysMs: { a: 0, b: 20, c: 20 }, workerParams: { initialTimeoutMs: 30_000 } });
  await openControlled(page, cluster.logicalUrl('/index.html'));
  const own = cluster.primary.origin;
  await waitForState(page, (state) => (state.servers.find((server) => server.server === own)?.sampleCount ?? 0) >= 4, {
    what: 'the own origin measured',
    timeoutMs: 60_000,
    between: async () => void (await page.reload()),
  });

  cluster.primary.stall();
  await page.goto(cluster.logicalUrl('/page2.html'), { waitUntil: 'load', timeout: 15_000 });
  await expect(page.locator('#title')).toHaveText('Page two');
  const state = await workerState(page);
  expect(state.decisions.findLast((decision) => decision.navigation)?.servedBy).not.toBe(own);
  // The script came from the worker's copy, by its static route: it did not wait on the network.
  expect(await pageScriptSource(page)).toBe('cache');
  expect(await page.evaluate(() => (window as { webpp?: unknown }).webpp !== undefined)).toBe(true);
  cluster.primary.release();
});
