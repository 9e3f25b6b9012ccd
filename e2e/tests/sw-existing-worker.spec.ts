/**
 * A site that already has a service worker of its own (not Workbox) adds the one script tag.
 * A scope holds one worker: webpp must not take the site's place (its offline page, its push
 * handlers), and the two must not replace each other on every page load.
 */
import { expect, test } from '@playwright/test';
import { Cluster, demoSite } from '../support/cluster/index.js';

let cluster: Cluster;

// The site's own worker: it answers /hello itself, as a site's offline page or API shim would.
const SITE_WORKER = `self.addEventListener('install', () => self.skipWaiting());
self.addEventListener('activate', (event) => event.waitUntil(self.clients.claim()));
self.addEventListener('fetch', (event) => {
  if (new URL(event.request.url).pathname === '/hello') event.respondWith(new Response('from the site worker'));
});`;

test.beforeEach(async () => {
  const site = demoSite(2);
  site['/own-sw.js'] = { contentType: 'text/javascript', body: SITE_WORKER, cacheControl: 'no-cache' };
  cluster = await Cluster.start({
    site,
    delaysMs: { a: 0, b: 50, c: 50 },
    // The site's own registration first (as the site had it), then webpp's tag.
    pageScript: `<script>navigator.serviceWorker.register('/own-sw.js')</script><script src="/webpp.js" async></script>`,
    origin: { injectScript: false },
  });
});

test.afterEach(async () => {
  await cluster.stop();
});

test("the site's own service worker keeps its scope; webpp stays off and says why", async ({ page }) => {
  const warnings: string[] = [];
  page.on('console', (message) => {
    if (message.type() === 'warning') warnings.push(message.text());
  });
  const activeScript = (): Promise<string | undefined> => page.evaluate(async () => (await navigator.serviceWorker.getRegistration())?.active?.scriptURL);
  // The scope's worker once this page's registrations are done: webpp.ready resolves once
  // its register() job (if it made one) has a worker installing, and a worker installing or
  // waiting is about to replace the active one.
  const settledScript = (): Promise<string | undefined> =>
    page.evaluate(async () => {
      await (window as unknown as { webpp: { ready: Promise<unknown> } }).webpp.ready;
      for (let wait = 0; wait < 100; wait++) {
        const registration = await navigator.serviceWorker.getRegistration();
        if (!registration?.installing && !registration?.waiting) return registration?.active?.scriptURL;
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      return 'still installing after 5 s';
    });
  const ownWorker = cluster.logicalUrl('/own-sw.js');
  await page.goto(cluster.logicalUrl('/index.html'));
  // A first visit races the two registrations: the site's register() and webpp's may both be
  // queued, and the later one replaces the earlier one's worker. Within a bounded number of
  // loads the site's worker holds the scope…
  for (let load = 0; load < 40 && (await settledScript()) !== ownWorker; load++) {
    await page.waitForTimeout(200);
    await page.reload();
  }
  expect(await activeScript()).toBe(ownWorker);
  // …and keeps it: webpp does not register over it again.
  const controllers: (string | undefined)[] = [];
  for (let load = 0; load < 3; load++) {
    await page.reload();
    await page.evaluate(() => (window as unknown as { webpp: { ready: Promise<unknown> } }).webpp.ready);
    controllers.push(await page.evaluate(() => navigator.serviceWorker.controller?.scriptURL));
  }
  expect(controllers).toEqual([ownWorker, ownWorker, ownWorker]);
  expect(await activeScript()).toBe(ownWorker);
  expect(await page.evaluate(async () => (await fetch('/hello')).text())).toBe('from the site worker');
  expect(warnings.some((text) => text.includes("the site's own service worker holds scope /"))).toBe(true);
});
