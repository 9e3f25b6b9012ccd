/**
 * The `npm start` demo, as a user runs it: start the launcher, open the gallery and see
 * every photo, open the dashboard and see the latency table, stop the replica that served
 * most of the gallery with the dashboard's button, reload, and still see every photo while
 * the dashboard shows the failover. Finally Ctrl-C stops the demo cleanly.
 */
import { expect, test, type Page } from '@playwright/test';
import { startDemoProcess, type DemoProcess } from '../../examples/demo/test/demo-process.js';
import { workerStateFromController } from '../support/webpp-page.js';

let demo: DemoProcess;

/** The page API of /webpp.js (sw/src/webpp.ts), as far as these tests use it. */
type WebppWindow = Window & { webpp?: { controlled(): Promise<void> } };


test.beforeAll(async () => {
  demo = await startDemoProcess();
});

test.afterAll(async () => {
  await demo?.kill();
});

/** Waits until every image of the page has loaded, then returns those that did not render. */
async function brokenImages(page: Page): Promise<string[]> {
  const images = 'img[src]';
  await page.waitForFunction((selector) => Array.from(document.querySelectorAll<HTMLImageElement>(selector)).every((image) => image.complete), images, { timeout: 30_000 });
  return page.evaluate(
    (selector) => Array.from(document.querySelectorAll<HTMLImageElement>(selector)).filter((image) => image.naturalWidth === 0).map((image) => image.src),
    images,
  );
}

test('the demo survives stopping its busiest replica, and the dashboard shows it', async ({ context }) => {
  test.setTimeout(180_000);

  // 1. The gallery: the first visit installs the worker; the reload is served through it.
  const gallery = await context.newPage();
  await gallery.goto(demo.galleryUrl);
  expect(await gallery.locator('#gallery img').count()).toBe(32);
  await gallery.evaluate(() => (window as WebppWindow).webpp?.controlled());
  await gallery.reload();
  expect(await gallery.evaluate(() => navigator.serviceWorker.controller !== null)).toBe(true);
  expect(await brokenImages(gallery)).toEqual([]);

  // 2. The dashboard: its latency table fills with the three replicas.
  const dashboard = await context.newPage();
  await dashboard.goto(demo.dashboardUrl);
  const rows = dashboard.locator('#latency-rows tr[data-server]');
  await expect(rows).toHaveCount(3, { timeout: 45_000 });
  await expect(dashboard.locator('#replica-cards .replica-card')).toHaveCount(3);
  await expect(dashboard.locator('#control-status')).toContainText('3 of 3 replicas running');

  // 3. Its preview load tells which replica served most of the gallery.
  const bars = dashboard.locator('#served-bars .served-bar[data-server^="http"]');
  await expect(bars.first()).toBeVisible({ timeout: 30_000 });
  const counts = await bars.evaluateAll((elements) =>
    elements.map((element) => ({ server: (element as HTMLElement).dataset.server ?? '', count: Number((element as HTMLElement).dataset.count) })),
  );
  const busiest = counts.sort((a, b) => b.count - a.count)[0]!;
  expect(busiest.count).toBeGreaterThan(0);
  const busiestId = new URL(busiest.server).hostname.split('.')[0]!;

  // 4. Stop it with the dashboard's button.
  const card = dashboard.locator(`.replica-card[data-replica="${busiestId}"]`);
  await card.locator('button[data-action="stop"]').click();
  await expect(card).toHaveAttribute('data-running', 'false', { timeout: 15_000 });
  await expect(dashboard.locator('#control-status')).toContainText('2 of 3 replicas running');

  // 5. Reload the gallery: every photo still renders, served by the other replicas. The
  //    worker learns that the replica is down when it next tries it: at once while it
  //    still ranks first, else by a HEAD refresh once its entry expires (TTL 20 s in the
  //    fast preset). A user reloads a few times; every reload must render everything.
  const stoppedRow = dashboard.locator(`#latency-rows tr[data-server="${busiest.server}"]`);
  for (let reload = 0; reload < 12; reload += 1) {
    await gallery.reload();
    expect(await brokenImages(gallery)).toEqual([]);
    const servedBy = (await workerStateFromController(gallery)).decisions
      .filter((decision) => decision.outcome === 'served')
      .slice(-20)
      .map((decision) => decision.servedBy);
    expect(servedBy.length).toBeGreaterThan(0);
    expect(servedBy).not.toContain(busiest.server);
    // The dashboard polls the worker once a second: a bounded wait for it to show the state.
    const failedShown = await expect(stoppedRow)
      .toHaveAttribute('data-state', 'failed', { timeout: 3000 })
      .then(() => true, () => false);
    if (failedShown) break;
  }

  // 6. The dashboard shows the stopped server failed, and the failover (or failed refresh) that found it.
  await expect(stoppedRow).toHaveAttribute('data-state', 'failed');
  const found = dashboard.locator(`#event-list li[data-server="${busiest.server}"]:is([data-kind="failover"], [data-kind="failed"])`);
  await expect(found.first()).toBeVisible({ timeout: 15_000 });

  // 7. Restart it from the dashboard: the card says so.
  await card.locator('button[data-action="start"]').click();
  await expect(card).toHaveAttribute('data-running', 'true', { timeout: 15_000 });

  // 8. "Slow down" adds delay to a replica's emulated link, "Restore speed" takes it away.
  const normalLink = (await card.locator('.replica-link').textContent()) ?? '';
  const normalMeanMs = Number(/· (\d+(?:\.\d+)?) ms/.exec(normalLink)?.[1]);
  expect(normalMeanMs).toBeGreaterThan(0);
  await card.locator('button[data-action="slow"]').click();
  await expect(card.locator('.pill')).toHaveText('Running, slowed', { timeout: 15_000 });
  await expect(card.locator('.replica-link')).toContainText(`· ${normalMeanMs + 400} ms`);
  await card.locator('button[data-action="restore"]').click();
  await expect(card.locator('.pill')).toHaveText('Running', { timeout: 15_000 });
  await expect(card.locator('.replica-link')).toHaveText(normalLink);
});

test('Ctrl-C stops the demo cleanly', async () => {
  const exitCode = await demo.interrupt();
  expect(exitCode).toBe(0);
  expect(demo.output()).toContain('webpp demo: stopped.');
});
