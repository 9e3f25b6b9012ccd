/**
 * Regenerates docs/screenshots/dashboard.png: runs the demo on ephemeral ports, drives
 * Debian's Chromium through a short session (warm-up loads, the busiest replica stopped,
 * a reload that fails over) and captures the dashboard.
 *   node --import tsx examples/demo/scripts/take-screenshot.ts [output.png]
 */
import { mkdir } from 'node:fs/promises';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from '@playwright/test';
import { startDemo } from '../src/cluster/demo-cluster.js';

const output = process.argv[2] ?? fileURLToPath(new URL('../../../docs/screenshots/dashboard.png', import.meta.url));
const WARM_UP_LOADS = 6;

const demo = await startDemo({ replicaPorts: [0, 0, 0], controlPort: 0, logLevel: 'silent' });
const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
  args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
});
try {
  const context = await browser.newContext({ viewport: { width: 1360, height: 900 }, deviceScaleFactor: 1 });
  const gallery = await context.newPage();
  await gallery.goto(demo.galleryUrl);
  await gallery.evaluate(() => (window as unknown as { webpp?: { controlled(): Promise<void> } }).webpp?.controlled());

  const dashboard = await context.newPage();
  await dashboard.goto(demo.dashboardUrl);
  await dashboard.locator('#latency-rows tr[data-server]').first().waitFor({ timeout: 30_000 });
  for (let load = 0; load < WARM_UP_LOADS; load += 1) {
    await dashboard.click('#reload-gallery');
    await dashboard.waitForTimeout(2500);
  }
  const busiest = await dashboard
    .locator('#served-bars .served-bar[data-server^="http"]')
    .evaluateAll((bars) => bars.map((bar) => ({ server: (bar as HTMLElement).dataset.server ?? '', count: Number((bar as HTMLElement).dataset.count) })).sort((a, b) => b.count - a.count)[0]);
  if (!busiest) throw new Error('no gallery load on the dashboard');
  const id = new URL(busiest.server).hostname.split('.')[0];
  await dashboard.click(`.replica-card[data-replica="${id}"] button[data-action="stop"]`);
  await dashboard.waitForTimeout(1000);
  await dashboard.click('#reload-gallery');
  await dashboard.locator('#event-list li[data-kind="failover"]').first().waitFor({ timeout: 30_000 });
  for (let load = 0; load < 3; load += 1) {
    await dashboard.waitForTimeout(2500);
    await dashboard.click('#reload-gallery');
  }
  await dashboard.waitForTimeout(2500);
  await mkdir(dirname(output), { recursive: true });
  await dashboard.screenshot({ path: output, fullPage: true });
  console.log(`wrote ${output}`);
} finally {
  await browser.close();
  await demo.close();
}
