/**
 * The client-aggregate variant of the first-visit bench (issue 13 §6): the steady traffic of
 * other visitors on the same network, whose workers report their own smoothed response times
 * to the site's origin (`clientAggregate` on). Each reporter is a browser context that loads
 * the gallery, waits, and loads it again, until stopped (bounded by `maxMs`). The origin
 * publishes a (network class, replica) row only while k reports arrived in the current and
 * previous report interval, so the reporters keep running while fresh visitors are measured.
 */
import type { Browser } from '@playwright/test';
import type { Cluster } from '../../support/cluster/index.js';
import { openControlled, workerState } from '../../support/webpp-page.js';

export interface Reporters {
  /** Resolves once every reporter sent at least one report. */
  reported: Promise<void>;
  stop(): Promise<void>;
}

export function startReporters(browser: Browser, cluster: Cluster, count: number, options: { pauseMs: number; maxMs: number }): Reporters {
  let stopped = false;
  const deadline = Date.now() + options.maxMs;
  const firstReports: Promise<void>[] = [];
  const loops: Promise<void>[] = [];
  for (let index = 0; index < count; index++) {
    let reported: () => void = () => undefined;
    firstReports.push(new Promise<void>((resolve) => (reported = resolve)));
    loops.push(
      (async () => {
        const context = await browser.newContext({ serviceWorkers: 'allow' });
        try {
          const page = await context.newPage();
          await openControlled(page, cluster.logicalUrl('/page2.html'));
          while (!stopped && Date.now() < deadline) {
            await page.goto(cluster.logicalUrl('/index.html'), { waitUntil: 'load' });
            if (((await workerState(page)).aggregate?.reportsSent ?? 0) > 0) reported();
            await page.waitForTimeout(options.pauseMs);
          }
        } finally {
          reported();
          await context.close();
        }
      })(),
    );
  }
  return {
    reported: Promise.all(firstReports).then(() => undefined),
    stop: async () => {
      stopped = true;
      await Promise.allSettled(loops);
    },
  };
}
