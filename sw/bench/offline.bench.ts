/**
 * Cost of offline copies (sw/src/offline-cache.ts) per request: the same bound requests with
 * offline copies on (`features=offline`) and off (`offlineMaxBytes=0`), in one run, interleaved
 * round by round, in real Chromium against real servers on loopback.
 *   unchanged  the resource has the ETag of the kept copy: the worker only touches the
 *              copy's LRU position (the steady state of a site being browsed)
 *   changed    every resource changed since the last round (new ETag): the worker tees the
 *              body and writes the copy to Cache Storage (in waitUntil, off the response)
 * Each request is timed in the page (fetch() start to body read), one at a time; the
 * figure is the median with copies on minus the median with copies off, and their ratio.
 *
 * Run: npm run bench -- offline   (writes docs/benchmarks/sw-offline.json)
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { chromium } from '@playwright/test';
import { median, percentile, timeFetches, controlledPage } from './support/page-timing.js';
import type { BrowserContext, Page } from '@playwright/test';
import { chromiumLaunchOptions } from '../../e2e/support/chromium.js';
import { Cluster, type Site } from '../../e2e/support/cluster/index.js';

const RESOURCES = 50;
const ROUNDS = Number(process.env.WEBPP_BENCH_ROUNDS ?? 12);
const WARMUP_ROUNDS = 2;
const OUTPUT = new URL('../../docs/benchmarks/sw-offline.json', import.meta.url);

const paths = Array.from({ length: RESOURCES }, (_, i) => `/r/${i}.txt`);
/** Bumped before each "changed" scenario: every body gets a new length, hence a new ETag. */
let version = 0;

function site(): Site {
  const result: Site = {
    '/index.html': { contentType: 'text/html; charset=utf-8', body: '<!doctype html><title>bench</title><!--webpp-->' },
  };
  for (const path of paths) {
    result[path] = { contentType: 'text/plain', cacheControl: 'no-cache', body: () => `resource ${path} `.repeat(20) + 'v'.repeat(version % 500) };
  }
  return result;
}

function round(value: number): number {
  return Math.round(value * 1000) / 1000;
}

type OfflineState = { offline: { saved: number; entries: number; bytes: number }; counters: Record<string, number> };
const stateOf = (page: Page): Promise<OfflineState> =>
  page.evaluate(() => (window as unknown as { webpp: { state(): Promise<OfflineState> } }).webpp.state());

async function main(): Promise<void> {
  const shared = site(); // both clusters serve the same (changing) files
  const on = await Cluster.start({ site: shared, names: ['on'], workerParams: { preset: 'fast', features: 'offline' } });
  const off = await Cluster.start({ site: shared, names: ['off'], workerParams: { preset: 'fast', offlineMaxBytes: 0 } });
  const browser = await chromium.launch(chromiumLaunchOptions);
  const contexts: BrowserContext[] = [];
  try {
    const page = async (cluster: Cluster): Promise<Page> => {
      const context = await browser.newContext();
      contexts.push(context);
      return controlledPage(context, cluster.primary.url('/index.html'));
    };
    const onPage = await page(on);
    const offPage = await page(off);
    const urls = (cluster: Cluster) => paths.map((path) => cluster.logicalUrl(path));
    const samples: Record<string, number[]> = { 'unchanged-on': [], 'unchanged-off': [], 'changed-on': [], 'changed-off': [] };
    for (let i = 0; i < WARMUP_ROUNDS + ROUNDS; i++) {
      // Alternate the order, so that neither side always runs right after a change.
      const sides: [string, Page, Cluster][] = i % 2 ? [['off', offPage, off], ['on', onPage, on]] : [['on', onPage, on], ['off', offPage, off]];
      for (const [side, target, cluster] of sides) {
        version += 1; // new ETags: this side's worker keeps a new copy of each (when on)
        const changed = await timeFetches(target, urls(cluster), 'no-cache');
        const unchanged = await timeFetches(target, urls(cluster), 'no-cache');
        if (i >= WARMUP_ROUNDS) {
          samples[`changed-${side}`]?.push(...changed);
          samples[`unchanged-${side}`]?.push(...unchanged);
        }
      }
    }
    const [onState, offState] = await Promise.all([stateOf(onPage), stateOf(offPage)]);
    const scenario = (name: string) => {
      const values = samples[name] ?? [];
      return { requests: values.length, median_ms: round(median(values)), p95_ms: round(percentile(values, 95)) };
    };
    const added = (kind: string) => round(median(samples[`${kind}-on`] ?? []) - median(samples[`${kind}-off`] ?? []));
    const ratio = (kind: string) => round(median(samples[`${kind}-on`] ?? []) / median(samples[`${kind}-off`] ?? []));
    const result = {
      benchmark: 'sw-offline',
      description:
        'Cost of offline copies per bound request: 50 small resources on loopback, fetched one at a time from the page (fetch() start to body read), copies on vs off (offlineMaxBytes=0) in the same run, interleaved round by round.',
      command: 'npm run bench -- offline',
      date: new Date().toISOString(),
      machine: { cpus: cpus().length, model: cpus()[0]?.model ?? 'unknown', node: process.version, load_average: loadavg().map((value) => round(value)) },
      chromium: browser.version(),
      rounds: ROUNDS,
      resources_per_round: RESOURCES,
      scenarios: Object.fromEntries(Object.keys(samples).map((name) => [name, scenario(name)])),
      added_median_ms: { unchanged: added('unchanged'), changed: added('changed') },
      ratio_on_vs_off: { unchanged: ratio('unchanged'), changed: ratio('changed') },
      checks: {
        // Copies were really written (one per resource per changed round), and never with copies off.
        copies_saved_on: onState.offline.saved,
        copies_kept_on: onState.offline.entries,
        copies_saved_off: offState.offline.saved,
        failed_on: onState.counters.failed ?? -1,
        failed_off: offState.counters.failed ?? -1,
      },
    };
    mkdirSync(new URL('.', OUTPUT), { recursive: true });
    writeFileSync(OUTPUT, `${JSON.stringify(result, null, 2)}\n`);
    console.log(JSON.stringify(result, null, 2));
  } finally {
    await Promise.all(contexts.map((context) => context.close()));
    await browser.close();
    await Promise.all([on.stop(), off.stop()]);
  }
}

await main();
