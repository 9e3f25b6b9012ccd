/**
 * First visits in real Chromium (issue 13 §6): the first-page load time of fresh visitors
 * (a new browser context: empty latency table) against a warmed-up visitor on the same
 * emulated network, with and without seeding from what the origin knows.
 *
 * Network: three real @webpp/origin replicas, peers, behind netem links. a is the site's own
 * origin, listed first, near (RTT 10 ms) but loaded: every request (pages, images, the
 * client scripts) waits LOADED_MS in the server before it is served, which its pushed
 * service time shows. b (RTT 30 ms) and c
 * (RTT 60 ms) are idle.
 *
 * A visitor opens the landing page (/page2.html: the page script installs the worker; one
 * observed same-origin fetch teaches it the bindings and the origin's push headers), then
 * loads the gallery (/index.html: 8 images, a style sheet, a script and a fetch). The
 * measure is that gallery load: navigation start → load event end (Navigation Timing).
 * "seeded" runs the default worker (pushed service times seed the order of unmeasured
 * replicas); "unseeded" the same worker with `pushMaxAgeMs=0` (push ignored: the origin's
 * order). A warmed visitor of each mode loads the gallery WARM_LOADS times first and is
 * then measured MEASURED_LOADS times. Fresh visitors of the two modes alternate.
 * "aggregate" (issue 13 §6) runs afterwards on a fresh cluster of the same network with
 * `clientAggregate` on (k = REPORTERS, report interval REPORT_INTERVAL_MS): REPORTERS other
 * visitors keep loading the gallery in the background and report their own times; the worker
 * ignores push (`pushMaxAgeMs=0`), so the aggregate alone seeds a fresh visitor's order.
 *
 * Reports medians and ranges and fresh / warmed ratios (goal: ≤ 1.2); writes
 * docs/benchmarks/first-visit.json.
 *
 *   npm run bench first-visit -- [--visitors 10]
 */
import { writeFileSync } from 'node:fs';
import { chromium, type Browser, type Page } from '@playwright/test';
import type { FastifyInstance } from 'fastify';
import { chromiumLaunchOptions } from '../support/chromium.js';
import { Cluster, demoSite } from '../support/cluster/index.js';
import { openControlled, waitForState, workerState } from '../support/webpp-page.js';
import { startReporters } from './first-visit/reporters.js';

const repoRoot = new URL('../../', import.meta.url).pathname;
const visitorsFlag = process.argv.indexOf('--visitors');
const VISITORS = Math.max(10, visitorsFlag < 0 ? 10 : Number(process.argv[visitorsFlag + 1]) || 10);
const DELAYS_MS = { a: 10, b: 30, c: 60 };
const LOADED_MS = 150;
const WARM_LOADS = 5;
const MEASURED_LOADS = 10;
const BENCH_DEADLINE_MS = 20 * 60_000;
const MODES = { seeded: { policy: 'webpp' }, unseeded: { policy: 'webpp', pushMaxAgeMs: 0 }, aggregate: { policy: 'webpp', pushMaxAgeMs: 0 } } as const;
type Mode = keyof typeof MODES;
/** The modes measured on the first cluster (push on the origins, no client aggregate). */
const PUSH_MODES: Mode[] = ['seeded', 'unseeded'];
const REPORTERS = 3;
const REPORT_INTERVAL_MS = 5_000;

/** Every request to a, except the origin's own endpoints (peer calls, statistics), waits LOADED_MS. */
function loadA(app: FastifyInstance): void {
  app.addHook('onRequest', async (request) => {
    if (request.url.startsWith('/.well-known/')) return;
    await new Promise((resolve) => setTimeout(resolve, LOADED_MS));
  });
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((x, y) => x - y);
  return sorted[Math.ceil(sorted.length / 2) - 1] ?? Number.NaN;
}

const round = (value: number): number => Math.round(value * 10) / 10;

/** A visitor's landing: worker installed, bindings and push headers learned, table empty. */
async function land(page: Page, cluster: Cluster): Promise<void> {
  await openControlled(page, cluster.logicalUrl('/page2.html'));
  await waitForState(page, (state) => state.bindings.count > 0, {
    what: 'bindings learned',
    between: async () => void (await page.evaluate(() => fetch('/page2.html', { cache: 'no-store' }).then((response) => response.text()))),
  });
}

/** One gallery load: navigation start → load event end (ms). */
async function galleryLoadMs(page: Page, cluster: Cluster): Promise<number> {
  await page.goto(cluster.logicalUrl('/index.html'), { waitUntil: 'load' });
  return page.evaluate(() => {
    const entry = performance.getEntriesByType('navigation')[0] as PerformanceNavigationTiming | undefined;
    return entry ? entry.loadEventEnd - entry.startTime : Number.NaN;
  });
}

/** Which replica served the gallery's bound requests ("a:3 b:9"), and with which first reasons. */
async function servedSummary(page: Page, cluster: Cluster): Promise<string> {
  const state = await workerState(page);
  const counts = new Map<string, number>();
  for (const decision of state.decisions) {
    const name = cluster.replicas.find((replica) => replica.origin === decision.servedBy)?.name ?? 'none';
    counts.set(name, (counts.get(name) ?? 0) + 1);
  }
  const navigation = state.decisions.find((decision) => decision.navigation);
  const first = navigation?.attempts[0];
  const nameOf = (origin: string | undefined): string => cluster.replicas.find((replica) => replica.origin === origin)?.name ?? 'none';
  const pushed = state.pushed.map((view) => `${nameOf(view.server)}=${Math.round(view.serviceMs)}`).join(',');
  const aggregate = (state.aggregate?.rows ?? []).map((row) => `${nameOf(row.server)}=${Math.round(row.responseMs)}/n${row.sampleCount}`).join(',');
  return `${[...counts].sort().map(([name, count]) => `${name}:${count}`).join(' ')}; page ${nameOf(first?.server)} ${first?.reason ?? '?'}; pushed ${pushed}${aggregate === '' ? '' : `; aggregate ${aggregate}`}`;
}

async function freshVisitor(browser: Browser, cluster: Cluster, mode: Mode): Promise<{ loadMs: number; served: string }> {
  cluster.workerParams = { ...MODES[mode] };
  const context = await browser.newContext({ serviceWorkers: 'allow' });
  try {
    const page = await context.newPage();
    await land(page, cluster);
    const loadMs = await galleryLoadMs(page, cluster);
    return { loadMs, served: await servedSummary(page, cluster) };
  } finally {
    await context.close();
  }
}

async function warmedVisitor(browser: Browser, cluster: Cluster, mode: Mode): Promise<number[]> {
  cluster.workerParams = { ...MODES[mode] };
  const context = await browser.newContext({ serviceWorkers: 'allow' });
  try {
    const page = await context.newPage();
    await land(page, cluster);
    for (let load = 0; load < WARM_LOADS; load++) await galleryLoadMs(page, cluster);
    const times: number[] = [];
    for (let load = 0; load < MEASURED_LOADS; load++) times.push(await galleryLoadMs(page, cluster));
    return times;
  } finally {
    await context.close();
  }
}

async function main(): Promise<void> {
  const deadline = setTimeout(() => {
    console.error(`first-visit bench: over ${BENCH_DEADLINE_MS / 60_000} min, stopping`);
    process.exit(2);
  }, BENCH_DEADLINE_MS);
  deadline.unref();
  const startCluster = (aggregate: boolean): Promise<Cluster> =>
    Cluster.start({
      site: demoSite(8),
      names: Object.keys(DELAYS_MS),
      delaysMs: DELAYS_MS,
      peers: true,
      // The reporters are other hosts of one network: k counts distinct reporters (issue 25 §1).
      // Each browser connection gets its own address, so a reporter that reconnects between
      // intervals may count twice: n here is an upper bound on the reporters.
      distinctClientAddresses: aggregate,
      origin: aggregate ? { syncIntervalMs: 2_000, clientAggregate: true, clientAggregateMinReports: REPORTERS, clientReportIntervalMs: REPORT_INTERVAL_MS } : { syncIntervalMs: 2_000 },
      configure: { a: loadA },
    });
  let cluster = await startCluster(false);
  const browser = await chromium.launch(chromiumLaunchOptions);
  const warmed: Record<Mode, number[]> = { seeded: [], unseeded: [], aggregate: [] };
  const fresh: Record<Mode, number[]> = { seeded: [], unseeded: [], aggregate: [] };
  const freshServed: Record<Mode, string[]> = { seeded: [], unseeded: [], aggregate: [] };
  try {
    console.log(`a (own origin, listed first): RTT ${DELAYS_MS.a} ms, ${LOADED_MS} ms in the server; b: RTT ${DELAYS_MS.b} ms; c: RTT ${DELAYS_MS.c} ms`);
    for (const mode of PUSH_MODES) {
      warmed[mode] = await warmedVisitor(browser, cluster, mode);
      console.log(`  warmed ${mode.padEnd(9)} median ${round(median(warmed[mode]))} ms  (${warmed[mode].map(round).join(', ')})`);
    }
    for (let visitor = 0; visitor < VISITORS; visitor++) {
      for (const mode of PUSH_MODES) {
        const { loadMs, served } = await freshVisitor(browser, cluster, mode);
        fresh[mode].push(loadMs);
        freshServed[mode].push(served);
      }
      console.log(
        `  fresh visitor ${visitor + 1}: seeded ${round(fresh.seeded.at(-1) ?? Number.NaN)} ms (${freshServed.seeded.at(-1)}), unseeded ${round(fresh.unseeded.at(-1) ?? Number.NaN)} ms (${freshServed.unseeded.at(-1)})`,
      );
    }
    await cluster.stop();
    cluster = await startCluster(true);
    console.log(`aggregate: a fresh cluster with clientAggregate on, ${REPORTERS} reporting visitors in the background`);
    cluster.workerParams = { ...MODES.aggregate };
    const reporters = startReporters(browser, cluster, REPORTERS, { pauseMs: 1_000, maxMs: 10 * 60_000 });
    try {
      await reporters.reported;
      warmed.aggregate = await warmedVisitor(browser, cluster, 'aggregate');
      console.log(`  warmed aggregate median ${round(median(warmed.aggregate))} ms  (${warmed.aggregate.map(round).join(', ')})`);
      for (let visitor = 0; visitor < VISITORS; visitor++) {
        const { loadMs, served } = await freshVisitor(browser, cluster, 'aggregate');
        fresh.aggregate.push(loadMs);
        freshServed.aggregate.push(served);
        console.log(`  fresh visitor ${visitor + 1}: aggregate ${round(loadMs)} ms (${served})`);
      }
    } finally {
      await reporters.stop();
    }
  } finally {
    await browser.close();
    await cluster.stop();
  }
  const rows = (Object.keys(MODES) as Mode[]).map((mode) => {
    const freshMedian = median(fresh[mode]);
    const warmedMedian = median(warmed[mode]);
    return {
      mode,
      worker_params: MODES[mode],
      fresh_visitors: fresh[mode].length,
      fresh_median_ms: round(freshMedian),
      fresh_range_ms: [round(Math.min(...fresh[mode])), round(Math.max(...fresh[mode]))],
      warmed_loads: warmed[mode].length,
      warmed_median_ms: round(warmedMedian),
      warmed_range_ms: [round(Math.min(...warmed[mode])), round(Math.max(...warmed[mode]))],
      fresh_over_warmed: Math.round((freshMedian / warmedMedian) * 100) / 100,
      goal_met: freshMedian / warmedMedian <= 1.2,
    };
  });
  const setup = {
    delaysMs: DELAYS_MS,
    loadedServer: 'a',
    loadedMs: LOADED_MS,
    page: '/index.html (8 images, css, script, fetch)',
    warmLoads: WARM_LOADS,
    measuredLoads: MEASURED_LOADS,
    aggregate: { reporters: REPORTERS, clientAggregateMinReports: REPORTERS, clientReportIntervalMs: REPORT_INTERVAL_MS },
  };
  writeFileSync(
    `${repoRoot}docs/benchmarks/first-visit.json`,
    `${JSON.stringify({ generatedAt: new Date().toISOString(), setup, rows, samples: { fresh, warmed, freshServedBy: freshServed } }, null, 2)}\n`,
  );
  console.log('\nmode       fresh median  warmed median  fresh/warmed (goal ≤ 1.2)');
  for (const row of rows) console.log(`${row.mode.padEnd(10)} ${String(row.fresh_median_ms).padStart(9)} ms ${String(row.warmed_median_ms).padStart(10)} ms  ${row.fresh_over_warmed}`);
  console.log('wrote docs/benchmarks/first-visit.json');
}

await main();
