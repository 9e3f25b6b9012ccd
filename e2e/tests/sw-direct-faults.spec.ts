/**
 * Faults on the own origin while the worker leaves a page's requests to the browser
 * (sw/src/direct.ts; the equal-replica cases are sw-direct.spec.ts). Three real replicas on
 * loopback with nothing between them, so the own origin is as good as the best and the
 * worker steps aside; then the own origin fails in ways a site sees: it lost a file the others
 * still hold (404), or its application answers 503.
 */
import { expect, test } from '@playwright/test';
import type { Page, Response } from '@playwright/test';
import { Cluster, PIXEL_PNG, demoSite } from '../support/cluster/index.js';
import { openControlled, pageRendered, workerState } from '../support/webpp-page.js';

const IMAGES = 8;
/** Page loads allowed for the worker to step aside (bounded; each load is a few hundred ms here). */
const MAX_LOADS = 12;
/** The file the own origin lost. */
const LOST = '/img/3.png';

let cluster: Cluster | undefined;

test.afterEach(async () => {
  await cluster?.stop();
  cluster = undefined;
});

interface Load {
  /** Per image path: did the worker answer it, its status and body as the page got them. */
  images: Map<string, { viaWorker: boolean; status: number; body: Buffer }>;
  rendered: Awaited<ReturnType<typeof pageRendered>>;
}

async function load(page: Page): Promise<Load> {
  const responses: Promise<[string, { viaWorker: boolean; status: number; body: Buffer }]>[] = [];
  const onResponse = (response: Response): void => {
    const path = new URL(response.url()).pathname;
    if (path.startsWith('/img/')) responses.push(response.body().then((body) => [path, { viaWorker: response.fromServiceWorker(), status: response.status(), body }]));
  };
  page.on('response', onResponse);
  await page.reload();
  const rendered = await pageRendered(page);
  page.off('response', onResponse);
  return { images: new Map(await Promise.all(responses)), rendered };
}

/** Loads until most of the page's images go to the network without the worker (bounded). */
async function untilDirect(page: Page): Promise<void> {
  for (let i = 0; i < MAX_LOADS; i++) {
    const { images } = await load(page);
    if ([...images.values()].filter((image) => !image.viaWorker).length > IMAGES / 2) return;
  }
  throw new Error(`images still through the worker after ${MAX_LOADS} loads; ${JSON.stringify((await workerState(page)).servers)}`);
}

test('the own origin lost a file the other replicas hold: once it has answered 404, every later load gets the file from them', async ({ page }) => {
  const site = demoSite(IMAGES);
  cluster = await Cluster.start({
    site,
    delaysMs: { a: 0, b: 0, c: 0 },
    // a (the own origin) no longer holds LOST; the directory still says every replica holds everything.
    holds: { a: Object.keys(site).filter((path) => path !== LOST) },
    entries: (origins) => [{ logical: '/*', servers: [origins['a']!, origins['b']!, origins['c']!] }],
  });
  await openControlled(page, cluster.logicalUrl('/index.html'));
  await untilDirect(page);
  // The own origin's 404 for LOST has been seen by now (by the worker or in the page's Resource
  // Timing). Before the fix, the worker left LOST to the browser on every load whose first bound
  // request was not LOST: the page got a's 404 and a broken image, load after load.
  let directLoads = 0;
  for (let i = 0; i < 4; i++) {
    const next = await load(page);
    const lost = next.images.get(LOST);
    expect(next.rendered, `load ${i + 1}: ${JSON.stringify(lost && { viaWorker: lost.viaWorker, status: lost.status })}`).toMatchObject({ images: IMAGES, brokenImages: 0 });
    expect(lost?.status).toBe(200);
    expect(lost?.body.equals(PIXEL_PNG)).toBe(true);
    if ([...next.images.values()].filter((image) => !image.viaWorker).length > IMAGES / 2) directLoads++;
  }
  // The other images still go to the own origin without the worker, on most loads: among
  // three equal replicas a busy moment of a can put a navigation on b (the page is then not
  // proved, and its images come through the worker), which is not this test's subject (it
  // failed that way in fresh-clone CI, and 2 of 8 here, with every image intact).
  expect(directLoads).toBeGreaterThanOrEqual(3);
});

test('the own origin starts answering 503 after a page it served: the next load fails over, every image intact', async ({ page }) => {
  cluster = await Cluster.start({ site: demoSite(IMAGES), delaysMs: { a: 0, b: 0, c: 0 } });
  await openControlled(page, cluster.logicalUrl('/index.html'));
  await untilDirect(page);
  cluster.replica('a').forcedStatus = 503;
  const next = await load(page);
  expect(next.rendered).toMatchObject({ images: IMAGES, brokenImages: 0, styled: true, scripted: true });
  for (const image of next.images.values()) {
    expect(image.viaWorker).toBe(true);
    expect(image.body.equals(PIXEL_PNG)).toBe(true);
  }
});

/** Adds `count` images to the page one after another, each once the one before has settled (a gallery's lazy loading). */
function addImages(page: Page, from: number, count: number): Promise<string[]> {
  return page.evaluate(
    async ([first, n]) => {
      const results: string[] = [];
      for (let i = first; i < first + n; i++) {
        const image = new Image();
        image.src = `/img/${(i % 8) + 1}.png?late=${i}`;
        document.body.append(image);
        results.push(await new Promise<string>((resolve) => {
          image.onload = () => resolve('loaded');
          image.onerror = () => resolve('error');
        }));
      }
      return results;
    },
    [from, count] as const,
  );
}

test('the own origin dies while a page it served stays open: once the page has told the worker of a failed image, its later images come through the worker', async ({ page }) => {
  cluster = await Cluster.start({ site: demoSite(IMAGES), delaysMs: { a: 0, b: 0, c: 0 } });
  await openControlled(page, cluster.logicalUrl('/index.html'));
  await untilDirect(page);
  await cluster.replica('a').kill();
  // The first images may fail: they are left to the browser, and the own origin refuses them
  // (in probes, one or two did before the page's report reached the worker; none when the
  // first was the worker's exploration request, which marks the own origin failed).
  await addImages(page, 0, 4);
  // A round trip to the worker: its messages from this page are handled in order, so the
  // page script's failure report has been by the time it answers.
  await workerState(page);
  expect(await addImages(page, 4, IMAGES)).toEqual(Array(IMAGES).fill('loaded'));
  const next = await load(page);
  expect(next.rendered).toMatchObject({ images: IMAGES, brokenImages: 0, styled: true, scripted: true });
});

test('the own origin dies while a page it served stays open: images and a stylesheet the browser failed to load are loaded once more, through the worker', async ({ page }) => {
  cluster = await Cluster.start({ site: demoSite(IMAGES), delaysMs: { a: 0, b: 0, c: 0 } });
  await openControlled(page, cluster.logicalUrl('/index.html'));
  await untilDirect(page);
  const requests = new Map<string, number>();
  page.on('request', (request) => {
    const url = new URL(request.url());
    if (url.searchParams.has('burst')) requests.set(url.pathname + url.search, (requests.get(url.pathname + url.search) ?? 0) + 1);
  });
  await cluster.replica('a').kill();
  // All at once, before the worker hears of any failure: at most one of them is the worker's
  // exploration request, the others are left to the browser and the dead own origin refuses
  // them. Before the page script loaded them again, they stayed broken.
  const settled = await page.evaluate(async (count) => {
    const images = Array.from({ length: count }, (_, i) => {
      const image = new Image();
      image.src = `/img/${i + 1}.png?burst=${i}`;
      document.body.append(image);
      return image;
    });
    const link = Object.assign(document.createElement('link'), { rel: 'stylesheet', href: '/style.css?burst=1' });
    document.head.append(link);
    const deadline = Date.now() + 20_000;
    const done = (): boolean => images.every((image) => image.complete && image.naturalWidth > 0) && document.querySelector<HTMLLinkElement>('link[href*="burst"]')?.sheet != null;
    while (!done() && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100));
    return {
      decoded: images.filter((image) => image.complete && image.naturalWidth > 0).length,
      styled: document.querySelector<HTMLLinkElement>('link[href*="burst"]')?.sheet != null,
      links: document.querySelectorAll('link[href*="burst"]').length,
    };
  }, IMAGES);
  expect(settled).toEqual({ decoded: IMAGES, styled: true, links: 1 });
  // Once per element: never more than the browser's attempt and the one through the worker.
  for (const [url, count] of requests) expect(count, url).toBeLessThanOrEqual(2);
  expect([...requests.values()].some((count) => count === 2), JSON.stringify([...requests])).toBe(true);
});
