/**
 * The herding bench's clients: `count` browser contexts at once, each its own client (its own
 * Service Worker, IndexedDB, connection pool), all running the same worker configuration.
 * Each loads the site's page, lets the worker learn the bindings, then — all starting at the
 * same instant — fetches images through its worker one after another with a think time,
 * for a fixed duration and at most a fixed number of requests (bounded in count and time).
 * The page measures each response time from fetch() to the body's end.
 */
import type { Browser, BrowserContext, Page } from '@playwright/test';
import type { Cluster } from '../../support/cluster/index.js';
import { openControlled, waitForState } from '../../support/webpp-page.js';

export interface ClientRecord {
  client: number;
  /** Since the shared start (ms). */
  startMs: number;
  responseMs: number;
  ok: boolean;
}

export interface ClientRunOptions {
  browser: Browser;
  cluster: Cluster;
  count: number;
  durationMs: number;
  thinkTimeMs: number;
  maxRequestsPerClient: number;
  requestTimeoutMs: number;
}

interface Prepared {
  context: BrowserContext;
  page: Page;
}

/**
 * One client's loop, run in its page. Plain JavaScript in a string: the bench runs under tsx,
 * whose transform would add helpers (__name) to a function passed to page.evaluate.
 */
const CLIENT_LOOP = `async (run) => {
  const records = [];
  await new Promise((resolve) => setTimeout(resolve, Math.max(0, run.startAtMs - Date.now())));
  const endAt = run.startAtMs + run.durationMs;
  for (let index = 0; index < run.maxRequests && Date.now() < endAt; index += 1) {
    const url = run.images[index % run.images.length] + '?client=' + run.client + '&n=' + index;
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(), run.requestTimeoutMs);
    const startMs = Date.now() - run.startAtMs;
    const t0 = performance.now();
    let ok = false;
    try {
      const response = await fetch(url, { cache: 'no-store', signal: controller.signal });
      await response.arrayBuffer();
      ok = response.ok;
    } catch {
      ok = false;
    } finally {
      clearTimeout(timer);
    }
    records.push({ client: run.client, startMs, responseMs: performance.now() - t0, ok });
    await new Promise((resolve) => setTimeout(resolve, run.thinkTimeMs));
  }
  return records;
}`;

/** Contexts set up at the same time (setup is not measured; more would only queue on 2 cores). */
const SETUP_CONCURRENCY = 3;

async function prepare(browser: Browser, cluster: Cluster): Promise<Prepared> {
  const context = await browser.newContext({ serviceWorkers: 'allow' });
  const page = await context.newPage();
  await openControlled(page, cluster.logicalUrl('/page2.html'));
  // An observed same-origin fetch teaches the bindings (the '/*' prefix); no latency sample yet.
  await waitForState(page, (state) => state.bindings.count > 0, {
    what: 'bindings learned',
    between: async () => void (await page.evaluate(() => fetch('/page2.html', { cache: 'no-store' }).then((response) => response.text()))),
  });
  return { context, page };
}

/** Runs every client; resolves with all records and the shared start (epoch ms). */
export async function runClients(options: ClientRunOptions): Promise<{ records: ClientRecord[]; startAtMs: number; endAtMs: number }> {
  const prepared: Prepared[] = [];
  try {
    let next = 0;
    const setupOne = async (): Promise<void> => {
      while (next < options.count) {
        next += 1;
        prepared.push(await prepare(options.browser, options.cluster));
      }
    };
    await Promise.all(Array.from({ length: Math.min(SETUP_CONCURRENCY, options.count) }, setupOne));
    const startAtMs = Date.now() + 1_000;
    const images = ['/img/1.png', '/img/2.png', '/img/3.png', '/img/4.png'].map((path) => options.cluster.logicalUrl(path));
    const runs = prepared.map(({ page }, client) =>
      page.evaluate<ClientRecord[]>(
        `(${CLIENT_LOOP})(${JSON.stringify({
          client,
          images,
          startAtMs,
          durationMs: options.durationMs,
          thinkTimeMs: options.thinkTimeMs,
          maxRequests: options.maxRequestsPerClient,
          requestTimeoutMs: options.requestTimeoutMs,
        })})`,
      ),
    );
    const records = (await Promise.all(runs)).flat();
    return { records, startAtMs, endAtMs: startAtMs + options.durationMs };
  } finally {
    await Promise.all(prepared.map(({ context }) => context.close().catch(() => undefined)));
  }
}
