/**
 * Content integrity (docs/service-worker.md, "Integrity") with real @webpp/origin replicas:
 * the site's own origin sends the SHA-256 digest of every file in its bindings header, and
 * replica c, the fastest, tampers with the bytes it serves (an onSend hook swaps the body).
 * The page must get the right bytes every time, and the worker's event log must name c.
 */
import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { expect, test } from '@playwright/test';
import type { Page } from '@playwright/test';
import { solidPng } from '../support/png.js';
import { Cluster } from '../support/cluster/index.js';
import { openControlled, pageRendered, waitForState, workerState } from '../support/webpp-page.js';

const GREEN = [20, 200, 40] as const;
const RED = [220, 10, 10] as const;
const DATA = randomBytes(200_000); // verified before the page sees it (under 1 MiB)
const BIG = randomBytes(1_500_000); // checked as the stream ends (over 1 MiB)

let root: string;
let cluster: Cluster;
/** Which paths c tampers with in the running test. */
let tamperedPaths: RegExp;

function sha256(bytes: Buffer): string {
  return createHash('sha256').update(bytes).digest('hex');
}

/** What c sends instead: another valid image, or the data with one byte flipped. */
function tampered(path: string): Buffer | undefined {
  if (!tamperedPaths.test(path)) return undefined;
  if (path.startsWith('/img/')) return solidPng(RED);
  const original = path === '/data.bin' ? DATA : path === '/big.bin' ? BIG : undefined;
  if (original === undefined) return undefined;
  const copy = Buffer.from(original);
  copy[1234] = (copy[1234] as number) ^ 0xff;
  return copy;
}

test.beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), 'webpp-integrity-'));
  mkdirSync(join(root, 'img'));
  const images = [1, 2, 3, 4].map((i) => `<img id="i${i}" src="img/${i}.png" alt="" width="16" height="16">`).join('');
  writeFileSync(
    join(root, 'index.html'),
    `<!doctype html><html><head><meta charset="utf-8"><title>integrity</title>` +
      `<script src="/webpp.js" data-features="integrity" async></script><link rel="stylesheet" href="/style.css"></head>` +
      // The origin sends digests of what the page references (its links too).
      `<body><h1 id="title">Gallery</h1>${images}<a href="/data.bin">data</a> <a href="/big.bin">big</a>` +
      `<script src="/app.js"></script></body></html>`,
  );
  writeFileSync(join(root, 'style.css'), 'h1 { color: rgb(10, 20, 30); }');
  writeFileSync(join(root, 'app.js'), 'window.appLoaded = true;');
  for (const i of [1, 2, 3, 4]) writeFileSync(join(root, 'img', `${i}.png`), solidPng(GREEN));
  writeFileSync(join(root, 'data.bin'), DATA);
  writeFileSync(join(root, 'big.bin'), BIG);
});

test.afterAll(() => {
  rmSync(root, { recursive: true, force: true });
});

test.beforeEach(async () => {
  cluster = await Cluster.start({
    root,
    origin: { contentDigests: true },
    delaysMs: { a: 150, b: 100, c: 0 },
    configure: {
      c: (app) =>
        app.addHook('onSend', async (request, reply, payload) => {
          const swapped = request.method === 'GET' && reply.statusCode === 200 ? tampered(request.url.split('?')[0] ?? '') : undefined;
          if (swapped === undefined) return payload;
          (payload as Readable | undefined)?.destroy?.();
          reply.header('content-length', String(swapped.length));
          return swapped;
        }),
    },
  });
});

test.afterEach(async () => {
  await cluster.stop();
});

/** The colour of each image as drawn, and the SHA-256 of /data.bin as fetch() gives it to the page. */
function whatThePageGot(page: Page): Promise<{ colours: number[][]; data: string }> {
  return page.evaluate(async () => {
    const colours = [...document.images].map((image) => {
      const canvas = document.createElement('canvas');
      canvas.width = 1;
      canvas.height = 1;
      const context = canvas.getContext('2d')!;
      context.drawImage(image, 0, 0, 1, 1);
      return [...context.getImageData(0, 0, 1, 1).data.slice(0, 3)];
    });
    const bytes = await (await fetch('/data.bin')).arrayBuffer();
    const digest = new Uint8Array(await crypto.subtle.digest('SHA-256', bytes));
    return { colours, data: [...digest].map((byte) => byte.toString(16).padStart(2, '0')).join('') };
  });
}

test('a replica serving tampered bytes: the page gets the right bytes every time, and the log names the replica', async ({ page }) => {
  tamperedPaths = /^\/(img\/|data\.bin$)/;
  const tamperer = cluster.replica('c');
  await openControlled(page, cluster.logicalUrl('/index.html'));
  await page.reload(); // observed: the own origin's bindings and digests
  for (let i = 0; i < 6; i++) {
    await page.reload();
    expect(await pageRendered(page)).toEqual({ images: 4, brokenImages: 0, styled: true, scripted: true });
    expect(await whatThePageGot(page)).toEqual({ colours: [[...GREEN], [...GREEN], [...GREEN], [...GREEN]], data: sha256(DATA) });
  }
  const state = await waitForState(page, (s) => s.counters.integrityFailures > 0, { what: 'an integrity failure' });
  // c was asked, and caught: every failure names it.
  expect(tamperer.log.some((entry) => entry.method === 'GET' && (entry.url.startsWith('/img/') || entry.url === '/data.bin'))).toBe(true);
  const failures = state.events.filter((event) => event.type === 'integrity-failure');
  expect(failures.length).toBeGreaterThan(0);
  for (const failure of failures) expect(failure).toMatchObject({ server: tamperer.origin, streamed: false });
  expect(state.decisions.filter((d) => d.outcome === 'served').every((d) => d.servedBy !== tamperer.origin || !/\/(img\/|data\.bin)/.test(d.logicalUrl))).toBe(true);
  expect(state.counters.failed).toBe(0);
});

test('a tampered body too large to hold: the page gets an error or the right bytes, never wrong bytes', async ({ page }) => {
  tamperedPaths = /^\/big\.bin$/;
  const tamperer = cluster.replica('c');
  await openControlled(page, cluster.logicalUrl('/index.html'));
  // Until the worker prefers c, the fastest (bounded).
  await waitForState(page, (state) => state.decisions.some((d) => d.navigation && d.servedBy === tamperer.origin), {
    what: 'a page served by c',
    between: async () => void (await page.reload()),
    timeoutMs: 45_000,
  });
  const results: string[] = [];
  for (let i = 0; i < 4; i++) {
    results.push(
      await page.evaluate(async () => {
        try {
          const bytes = await (await fetch('/big.bin', { cache: 'no-store' })).arrayBuffer();
          const digest = new Uint8Array(await crypto.subtle.digest('SHA-256', bytes));
          return [...digest].map((byte) => byte.toString(16).padStart(2, '0')).join('');
        } catch {
          return 'network-error';
        }
      }),
    );
  }
  for (const result of results) expect([sha256(BIG), 'network-error']).toContain(result);
  // c, the preferred replica, served the first try: caught at the end, c marked failed; the
  // tries after it came from the others, whole and right.
  expect(results[0]).toBe('network-error');
  expect(results.at(-1)).toBe(sha256(BIG));
  expect(tamperer.log.some((entry) => entry.url === '/big.bin')).toBe(true);
  const state = await workerState(page);
  expect(state.events).toContainEqual(expect.objectContaining({ type: 'integrity-failure', server: tamperer.origin, streamed: true }));
});
