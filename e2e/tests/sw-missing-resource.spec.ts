/**
 * A missing resource costs at most two requests (issue 25 item 7). A page that links a file
 * no replica has (zantroke-demo's missing `easytabs.js`) used to ask a, b and c in turn before
 * it got its 404. A 404 or 410 may be one replica's stale binding, so one more replica is
 * asked; a second 404/410 is final (core run-attempts.ts, FINAL_AFTER_MISSING_ANSWERS), and
 * the page gets that answer (docs/service-worker.md, "Which answers are final").
 */
import { expect, test } from '@playwright/test';
import { Cluster, demoSite } from '../support/cluster/index.js';
import { openControlled, pageRendered, waitForState } from '../support/webpp-page.js';

let cluster: Cluster | undefined;

test.afterEach(async () => {
  await cluster?.stop();
  cluster = undefined;
});

test('a resource no replica has: the page gets the 404, after at most two requests', async ({ page }) => {
  cluster = await Cluster.start({
    site: demoSite(4),
    // The own origin (a) is not the fastest: were it the plan's sole first choice, the worker would
    // leave the fetch to the browser (sw/src/direct.ts), and its 404 would be the page's at once.
    delaysMs: { a: 60, b: 20, c: 40 },
    // Every path is bound to all three replicas, also the one none of them has.
    entries: (origins) => [{ logical: '/*', servers: [origins['a'] ?? '', origins['b'] ?? '', origins['c'] ?? ''] }],
  });
  const replicas = ['a', 'b', 'c'].map((name) => cluster!.replica(name));
  await openControlled(page, cluster.logicalUrl('/index.html'));
  await page.reload();
  expect((await pageRendered(page)).brokenImages).toBe(0);
  await waitForState(page, (state) => state.decisions.length > 0, { what: 'the gallery bound' });
  for (const replica of replicas) replica.clearLog();

  const status = await page.evaluate(() => fetch('/js/easytabs.js').then((response) => response.status));
  expect(status).toBe(404);
  const state = await waitForState(page, (snapshot) => snapshot.decisions.some((decision) => decision.logicalUrl.endsWith('/js/easytabs.js')), { what: 'the missing file decided' });
  const decision = state.decisions.find((record) => record.logicalUrl.endsWith('/js/easytabs.js'))!;
  expect(decision.attempts.map((attempt) => attempt.outcome)).toEqual(['stale', 'stale']);
  // The page's request reached two replicas, not three (background refreshes are HEADs or ranged GETs).
  const asked = replicas.flatMap((replica) => replica.requests('/js/easytabs.js', 'GET').filter((entry) => entry.headers['range'] === undefined));
  expect(asked).toHaveLength(2);
});
