/**
 * Late binding of a page's burst (issue 22 §2, bursts; core engine/late-binding.ts). Two
 * real replicas behind netem links hold thirty files: a answers its first byte at once but
 * sends bodies at 50 kB/s; b answers 40 ms later over 20 MB/s. The worker has measured
 * neither. The page asks for all thirty at once. Bound up front, the burst was spread over
 * both before any answer came, and half of it queued behind a's six connections; bound late,
 * a gets its first wave (what its six connections take at once) and the rest waits in the
 * worker, to go to whichever replica frees a connection and is then preferred: b, whose
 * bodies end in milliseconds.
 */
import { expect, test, type Page } from '@playwright/test';
import type { Cluster } from '../support/cluster/index.js';
import type { RequestLogEntry } from '../support/cluster/request-log.js';
import { clearLogs, isWholeGet, linkingSite, noise, startFilesCluster } from '../support/files-cluster.js';

const FILES = Array.from({ length: 30 }, (_, i) => `/f/${i + 1}.bin`);
/** 0.8 s alone over a's link (six at once share it), 2 ms over b's. */
const FILE_BYTES = 40_000;
/** Chromium's connections per host over HTTP/1.1 (the link emulator speaks HTTP/1.1). */
const CONNECTIONS_PER_HOST = 6;

const site = linkingSite('late binding', FILES);
FILES.forEach((path, i) => (site[path] = { contentType: 'application/octet-stream', body: noise(FILE_BYTES, i + 1) }));

let cluster: Cluster | undefined;

test.afterEach(async () => {
  await cluster?.stop();
  cluster = undefined;
});

/** The page fetches every path at once (no HTTP cache); resolves with each body's length. */
function burst(page: Page, paths: readonly string[]): Promise<number[]> {
  return page.evaluate((urls) => Promise.all(urls.map((url) => fetch(url, { cache: 'no-store' }).then((response) => response.arrayBuffer()).then((body) => body.byteLength))), [...paths]);
}

/** A page's request for one of the files as a replica got it. */
function fileGet(entry: RequestLogEntry): boolean {
  return isWholeGet(entry) && entry.url.startsWith('/f/');
}

test('a first burst over a thin and a fat replica: the thin one gets what its connections take at once, the rest is bound as connections free', async ({ page }) => {
  test.setTimeout(120_000);
  cluster = await startFilesCluster(page, {
    site,
    links: {
      a: { delayMs: 5, bandwidthBytesPerSec: 50_000 },
      b: { delayMs: 40, bandwidthBytesPerSec: 20_000_000 },
    },
    holds: { a: FILES, b: FILES },
    entries: (origins) => [{ logical: '/f/*', servers: [origins['a']!, origins['b']!] }],
  });
  clearLogs(cluster, ['a', 'b']);

  expect(await burst(page, FILES)).toEqual(FILES.map(() => FILE_BYTES));

  const toA = cluster.replica('a').log.filter(fileGet).length;
  const toB = cluster.replica('b').log.filter(fileGet).length;
  // Bound up front (before late binding), a got half the burst (15) before any answer came.
  // Now: its first wave, six connections' worth, and nothing more once b is known to be fast.
  expect(toA).toBeLessThanOrEqual(CONNECTIONS_PER_HOST);
  expect(toB).toBeGreaterThanOrEqual(FILES.length - CONNECTIONS_PER_HOST);
});
