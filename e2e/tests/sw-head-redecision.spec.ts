/**
 * Deciding again at the response head, when the body's pace is not known (issue 22 §2; core
 * head-redecision.ts, rent or buy; sw/src/engine-hooks.ts, hook C). Two real replicas behind
 * netem links: a answers its first byte at once but sends bodies at 100 kB/s; b answers
 * 200 ms later over 20 MB/s. The worker has measured both first bytes and b's link, never a
 * body from a. A URL never fetched (no size known) goes to a, the fastest first byte. At a's
 * head nothing tells how long its body will take: the worker waits as long as a whole fetch
 * from b would take, then fetches from b, and the page gets whichever body ends first, byte
 * for byte. A body that ends before then starts no second fetch.
 */
import { createHash } from 'node:crypto';
import { expect, test, type Page } from '@playwright/test';
import type { Cluster } from '../support/cluster/index.js';
import type { RequestLogEntry } from '../support/cluster/request-log.js';
import { clearLogs, isWholeGet, linkingSite, noise, startFilesCluster } from '../support/files-cluster.js';
import { waitForState, workerState } from '../support/webpp-page.js';
import type { WorkerStateSnapshot } from '../support/webpp-page.js';

/** 10 s over a's link, about 50 ms over b's. */
const BIG = noise(1_000_000, 1);
/** 40 ms over a's link: over long before a whole fetch from b (200 ms first byte) could be. */
const SMALL = noise(4_000, 2);
const SMALL_FILES = ['/s/1.txt', '/s/2.txt', '/s/3.txt', '/s/4.txt'];

const site = linkingSite('head re-decision', ['/s/1.txt', '/blob/b-only.bin', '/blob/big.bin']);
site['/blob/b-only.bin'] = { contentType: 'application/octet-stream', body: noise(512_000, 3) };
for (const path of SMALL_FILES) site[path] = { contentType: 'text/plain; charset=utf-8', body: `small file ${path}\n` };

let cluster: Cluster | undefined;

test.afterEach(async () => {
  await cluster?.stop();
  cluster = undefined;
});

/** Fetches `path` from the page (no HTTP cache); resolves with the body's SHA-256 (hex) and length. */
function pageFetch(page: Page, path: string): Promise<{ sha256: string; bytes: number }> {
  return page.evaluate(async (url) => {
    const body = await (await fetch(url, { cache: 'no-store' })).arrayBuffer();
    const digest = new Uint8Array(await crypto.subtle.digest('SHA-256', body));
    return { sha256: [...digest].map((byte) => byte.toString(16).padStart(2, '0')).join(''), bytes: body.byteLength };
  }, path);
}

function sha256(bytes: Buffer): string {
  return createHash('sha256').update(bytes).digest('hex');
}

/** A page's request for `path` as a replica got it. */
function wholeGet(entry: RequestLogEntry, path: string): boolean {
  return isWholeGet(entry) && entry.url === path;
}

function row(state: WorkerStateSnapshot, origin: string): WorkerStateSnapshot['servers'][number] | undefined {
  return state.servers.find((server) => server.server === origin);
}

/** Small files from both, until the worker has measured a's and b's first bytes. */
async function measureFirstBytes(page: Page, a: string, b: string): Promise<void> {
  let next = 0;
  await waitForState(page, (state) => [a, b].every((origin) => (row(state, origin)?.sampleCount ?? 0) >= 2), {
    what: "a's and b's first bytes measured",
    timeoutMs: 30_000,
    between: async () => void (await pageFetch(page, SMALL_FILES[next++ % SMALL_FILES.length]!)),
  });
}

/**
 * The cluster, and a controlled page whose worker measured a's and b's first bytes (small
 * files from both) and b's link (a file only b holds), never a body from a.
 */
async function warmedUp(page: Page): Promise<{ a: string; b: string }> {
  cluster = await startFilesCluster(page, {
    site,
    links: {
      a: { delayMs: 5, bandwidthBytesPerSec: 100_000 },
      b: { delayMs: 200, bandwidthBytesPerSec: 20_000_000 },
    },
    holds: { a: SMALL_FILES, b: [...SMALL_FILES, '/blob/b-only.bin'] },
    entries: (origins) => [
      { logical: '/blob/b-only.bin', servers: [origins['b']!] },
      { logical: '/blob/*', servers: [origins['a']!, origins['b']!] },
      { logical: '/s/*', servers: [origins['a']!, origins['b']!] },
    ],
    // Every request earns a token of the extra budget: the budget is core's tests' subject,
    // not this one's (webpp-v3.test.ts: without a token nothing starts).
    workerParams: { extraBudgetShare: 1 },
    // Stored through the management API: the same strong ETag (its digest) on both replicas,
    // so that b's answer is known to continue a's body (static files carry weak ETags of their mtime).
    stored: [
      { path: '/blob/big.bin', body: BIG, on: ['a', 'b'] },
      { path: '/blob/small.bin', body: SMALL, on: ['a', 'b'] },
    ],
  });
  const a = cluster.replica('a').origin;
  const b = cluster.replica('b').origin;
  await measureFirstBytes(page, a, b);
  await pageFetch(page, '/blob/b-only.bin');
  const state = await waitForState(page, (snapshot) => row(snapshot, b)?.throughputBytesPerMs !== undefined, { what: "b's link measured" });
  // What this test is about: a's pace is not known, its first byte is the fastest.
  expect(row(state, a)?.throughputBytesPerMs).toBeUndefined();
  expect(row(state, a)!.meanMs).toBeLessThan(row(state, b)!.meanMs);
  clearLogs(cluster, ['a', 'b']);
  return { a, b };
}

test('a body of unknown pace crawling on a thin link: the worker fetches it elsewhere once it has run as long as a whole fetch there would', async ({ page }) => {
  test.setTimeout(120_000);
  const { a, b } = await warmedUp(page);
  const path = '/blob/big.bin?v=1';
  const body = await pageFetch(page, path);
  expect(body).toEqual({ sha256: sha256(BIG), bytes: BIG.length });

  const state = await waitForState(page, (snapshot) => snapshot.events.some((event) => event.type === 'head-redecided'), { what: 'the head re-decided' });
  const decision = state.decisions.find((record) => record.logicalUrl.endsWith(path));
  expect(decision?.servedBy).toBe(a);
  const redecided = state.events.filter((event) => event.type === 'head-redecided');
  expect(redecided).toHaveLength(1);
  expect(redecided[0]).toMatchObject({ from: a, to: b, switched: true });
  // Started once a's body had run as long as a whole fetch from b takes (b's 200 ms first
  // byte and more), not at the head: b got it at least that long after a did, plus half of
  // b's round trip (timers never fire early, so no margin is needed the other way).
  // b's fetch is of the rest: from the byte the page had then (a Range request), or the whole when it had none.
  const aRequest = cluster!.replica('a').log.find((entry) => wholeGet(entry, path));
  const bRequest = cluster!.replica('b').log.find((entry) => entry.method === 'GET' && entry.url === path);
  expect(aRequest).toBeDefined();
  expect(bRequest).toBeDefined();
  expect(bRequest!.atMs - aRequest!.atMs).toBeGreaterThanOrEqual(250);
});

test('a body that ends before a whole fetch elsewhere would have starts no second fetch', async ({ page }) => {
  test.setTimeout(120_000);
  const { a } = await warmedUp(page);
  const path = '/blob/small.bin?v=1';
  expect(await pageFetch(page, path)).toEqual({ sha256: sha256(SMALL), bytes: SMALL.length });
  // Past the moment the worker looks again (about 250 ms after a's head).
  await page.waitForTimeout(1_000);
  const state = await workerState(page);
  expect(state.decisions.find((record) => record.logicalUrl.endsWith(path))?.servedBy).toBe(a);
  expect(cluster!.replica('a').log.some((entry) => wholeGet(entry, path))).toBe(true);
  // No second fetch went to b, of this body or of any before it (the warm-up's small files).
  expect(cluster!.replica('b').log.filter((entry) => entry.method === 'GET' && entry.headers['range'] === undefined).map((entry) => entry.url)).toEqual([]);
  expect(state.events.filter((event) => event.type === 'head-redecided')).toEqual([]);
});

/**
 * The body's own pace (core head-redecision.ts, HeadFacts.bodyBytesSoFar): a and b are alike
 * (20 MB/s links, a's first byte a little sooner), both measured, so a's 1 MB body is on
 * time at its head and a whole second fetch is not worth it. Then a's link stalls mid-body
 * (netem's body stall, for far longer than the test). The worker reads the body's pace at its
 * next looks, finds the rest here far longer than the rest from b, and fetches from b only
 * the bytes the page does not have yet (a Range request naming the entity).
 */
test('a body whose link stalls after the head is finished from another replica by a ranged fetch of the rest', async ({ page }) => {
  test.setTimeout(120_000);
  cluster = await startFilesCluster(page, {
    site,
    links: {
      a: { delayMs: 5, bandwidthBytesPerSec: 20_000_000 },
      b: { delayMs: 40, bandwidthBytesPerSec: 20_000_000 },
    },
    holds: { a: SMALL_FILES, b: [...SMALL_FILES, '/blob/b-only.bin'] },
    entries: (origins) => [
      { logical: '/blob/a-only.bin', servers: [origins['a']!] },
      { logical: '/blob/b-only.bin', servers: [origins['b']!] },
      { logical: '/blob/*', servers: [origins['a']!, origins['b']!] },
      { logical: '/s/*', servers: [origins['a']!, origins['b']!] },
    ],
    workerParams: { extraBudgetShare: 1 },
    stored: [
      { path: '/blob/big.bin', body: BIG, on: ['a', 'b'] },
      { path: '/blob/a-only.bin', body: noise(512_000, 4), on: ['a'] },
    ],
  });
  const a = cluster.replica('a').origin;
  const b = cluster.replica('b').origin;
  await measureFirstBytes(page, a, b);
  await pageFetch(page, '/blob/a-only.bin');
  await pageFetch(page, '/blob/b-only.bin');
  await waitForState(page, (snapshot) => [a, b].every((origin) => row(snapshot, origin)?.throughputBytesPerMs !== undefined), { what: "a's and b's links measured" });

  // From now on every body on a's link stops part-way for 60 s.
  cluster.replica('a').emulator!.setStall({ probability: 1, durationMs: 60_000, phase: 'body' });
  clearLogs(cluster, ['a', 'b']);
  const path = '/blob/big.bin?v=stall';
  expect(await pageFetch(page, path)).toEqual({ sha256: sha256(BIG), bytes: BIG.length });

  const state = await waitForState(page, (snapshot) => snapshot.events.some((event) => event.type === 'head-redecided'), { what: 'the body re-decided' });
  expect(state.decisions.find((record) => record.logicalUrl.endsWith(path))?.servedBy).toBe(a);
  expect(state.events.filter((event) => event.type === 'head-redecided')).toEqual([expect.objectContaining({ from: a, to: b, switched: true })]);
  // a got the page's whole GET; b only a Range request for the rest, naming the entity.
  expect(cluster.replica('a').log.filter((entry) => entry.method === 'GET' && entry.url === path).map((entry) => entry.headers['range'])).toEqual([undefined]);
  const rest = cluster.replica('b').log.filter((entry) => entry.method === 'GET' && entry.url === path);
  expect(rest).toHaveLength(1);
  expect(String(rest[0]!.headers['range'])).toMatch(/^bytes=\d+-$/);
  expect(rest[0]!.headers['if-range']).toBeDefined();
  cluster.replica('a').emulator!.setStall(null);
});
