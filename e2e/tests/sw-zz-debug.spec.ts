import { test } from '@playwright/test';
import { ReplicaCluster, demoSite } from '../support/replica-cluster.js';
import { openControlled, workerState } from '../support/webpp-page.js';
test('dump', async ({ page }) => {
  const cluster = await ReplicaCluster.start({ site: demoSite(4), delaysMs: { a: 150, b: 0, c: 150 } });
  page.on('console', (m) => console.log('console:', m.text()));
  await openControlled(page, cluster.logicalUrl('/index.html'));
  await page.reload();
  cluster.controlOff = true;
  await page.reload();
  for (let i = 0; i < 8; i++) {
    console.log(await page.evaluate(async () => {
      const r = await navigator.serviceWorker.getRegistration();
      return JSON.stringify({ reg: r ? { active: r.active?.state, installing: r.installing?.state, waiting: r.waiting?.state, url: r.active?.scriptURL } : null, controller: navigator.serviceWorker.controller?.state, off: localStorage.getItem('webpp:off') });
    }));
    await page.waitForTimeout(500);
  }
  console.log(cluster.primary.log.map((e) => e.method + ' ' + e.url).join(', '));
  await cluster.stop();
});
