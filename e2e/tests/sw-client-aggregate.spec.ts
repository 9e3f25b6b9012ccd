/**
 * The client aggregate for first visits, end to end (issue 13 §6): three real origins with
 * `clientAggregate` on. Replica b is far on this network (250 ms round trip through netem)
 * but idle, so its pushed service time is as low as near c's, and the origin lists b first
 * for the images: a fresh visitor with neither its own measurements nor a useful push plans
 * its first image with b first (the origin's order; engine v3's cold-start race asks c at the
 * same time, and the first answer serves). Then three warmed-up visitors (browser contexts at once) load images,
 * measure both replicas and report their own smoothed times to the site's origin; once k = 3
 * reports from distinct addresses are in (the emulators forward each browser connection from
 * its own loopback address of one /16), the origin sends the aggregate of this network class to the next fresh
 * visitor, which binds its first image to c without asking b, which it never measured.
 */
import { expect, test, type Browser, type Page } from '@playwright/test';
import { Cluster, demoSite } from '../support/cluster/index.js';
import { openControlled, waitForState, type WorkerStateSnapshot } from '../support/webpp-page.js';

const REPORT_INTERVAL_MS = 5_000;
const WARM_VISITORS = 3;

test.setTimeout(120_000);

/** Landing: worker installed, the bindings and the own origin's headers learned from an observed fetch. */
async function land(page: Page, cluster: Cluster): Promise<WorkerStateSnapshot> {
  await openControlled(page, cluster.logicalUrl('/page2.html'));
  return waitForState(page, (state) => state.bindings.count > 0, {
    what: 'bindings learned',
    between: async () => void (await page.evaluate(() => fetch('/index.html', { cache: 'no-store' }).then((response) => response.text()))),
  });
}

/** A fresh visitor's first bound image: the replica that served it, and what the worker knew before. */
async function freshVisitor(browser: Browser, cluster: Cluster, expectRows: boolean): Promise<{ servedBy: string | undefined; asked: string[]; before: WorkerStateSnapshot }> {
  const context = await browser.newContext({ serviceWorkers: 'allow' });
  try {
    const page = await context.newPage();
    await openControlled(page, cluster.logicalUrl('/page2.html'));
    const before = await waitForState(page, (state) => state.bindings.count > 0 && (!expectRows || (state.aggregate?.rows.length ?? 0) >= 2), {
      what: expectRows ? 'bindings and the aggregate learned' : 'bindings learned',
      between: async () => void (await page.evaluate(() => fetch('/index.html', { cache: 'no-store' }).then((response) => response.text()))),
    });
    await page.evaluate((url) => fetch(url).then((response) => response.arrayBuffer()), cluster.logicalUrl('/img/1.png'));
    const state = await waitForState(page, (snapshot) => snapshot.decisions.some((decision) => decision.logicalUrl.endsWith('/img/1.png')), { what: 'image bound' });
    const decision = state.decisions.find((record) => record.logicalUrl.endsWith('/img/1.png'));
    return { servedBy: decision?.servedBy, asked: decision?.attempts.map((attempt) => attempt.server) ?? [], before };
  } finally {
    await context.close();
  }
}

/** A visitor that loads images until its worker measured both replicas and sent a report. */
async function warmVisitor(browser: Browser, cluster: Cluster, b: string, c: string): Promise<WorkerStateSnapshot> {
  const context = await browser.newContext({ serviceWorkers: 'allow' });
  try {
    const page = await context.newPage();
    await land(page, cluster);
    let image = 0;
    return await waitForState(
      page,
      (state) => (state.aggregate?.reportsSent ?? 0) >= 1 && [b, c].every((server) => state.servers.some((view) => view.server === server && view.sampleCount > 0)),
      {
        what: 'both replicas measured and a report sent',
        timeoutMs: 60_000,
        between: async () => {
          image = (image % 4) + 1;
          await page.evaluate((url) => fetch(url, { cache: 'no-store' }).then((response) => response.arrayBuffer()), cluster.logicalUrl(`/img/${image}.png`));
          await page.waitForTimeout(300);
        },
      },
    );
  } finally {
    await context.close();
  }
}

test('a fresh visitor is bound from the aggregate of warmed-up visitors on its network, around a replica whose push looks fine', async ({ browser }) => {
  const cluster = await Cluster.start({
    site: demoSite(4),
    workerParams: { features: 'aggregate' },
    delaysMs: { a: 5, b: 250, c: 20 },
    peers: true,
    // The visitors are other hosts of one network: k counts distinct reporters (issue 25 §1).
    distinctClientAddresses: true,
    origin: { syncIntervalMs: 1_000, clientAggregate: true, clientAggregateMinReports: WARM_VISITORS, clientReportIntervalMs: REPORT_INTERVAL_MS },
    entries: (origins) => [
      { logical: '/img/*', servers: [origins['b'] ?? '', origins['c'] ?? ''] },
      { logical: '/*', servers: [origins['a'] ?? '', origins['b'] ?? '', origins['c'] ?? ''] },
    ],
  });
  try {
    const b = cluster.replica('b').origin;
    const c = cluster.replica('c').origin;
    // No reports yet: the origin says it takes them, but sends no rows, and the first image is
    // planned in the origin's order, b first (raced against c: nothing tells which is nearer).
    const blind = await freshVisitor(browser, cluster, false);
    expect(blind.before.aggregate).toMatchObject({ reportIntervalMs: REPORT_INTERVAL_MS, rows: [] });
    expect(blind.asked[0]).toBe(b);

    const warmed = await Promise.all(Array.from({ length: WARM_VISITORS }, () => warmVisitor(browser, cluster, b, c)));
    for (const state of warmed) expect(state.aggregate?.reportsFailed).toBe(0);
    const aggregate = cluster.replica('a').app?.webpp.clientAggregate;
    expect(aggregate?.gauges(Date.now()).publishedCells).toBeGreaterThanOrEqual(2);

    const seeded = await freshVisitor(browser, cluster, true);
    const rows = Object.fromEntries((seeded.before.aggregate?.rows ?? []).map((row) => [row.server, row]));
    // The aggregate tells b is slow from here, c fast, each from at least k reports…
    expect(rows[b]?.responseMs).toBeGreaterThan(rows[c]?.responseMs ?? Infinity);
    expect(rows[b]?.sampleCount).toBeGreaterThanOrEqual(WARM_VISITORS);
    // …although b's pushed service time, relayed by the own origin, is no higher than c's by much.
    const pushedB = seeded.before.pushed.find((view) => view.server === b)?.serviceMs;
    const pushedC = seeded.before.pushed.find((view) => view.server === c)?.serviceMs;
    if (pushedB !== undefined && pushedC !== undefined) expect(pushedB - pushedC).toBeLessThan(100);
    // The fresh visitor never talked to b or c, yet its first image goes to c.
    expect(seeded.before.servers.filter((view) => view.sampleCount > 0).map((view) => view.server)).not.toContain(b);
    expect(seeded.servedBy).toBe(c);
    // The aggregate is enough to choose by: c first, and no race to b.
    expect(seeded.asked[0]).toBe(c);
    expect(seeded.asked).not.toContain(b);
  } finally {
    await cluster.stop();
  }
});
