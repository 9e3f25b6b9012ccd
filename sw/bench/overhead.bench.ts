/**
 * Overhead of the worker per request (paper Section 3.1: the applet's binding method took
 * 15 ms on Navigator and 26 ms on Explorer; we aim for under 1 ms).
 *
 * A page of 50 small resources on loopback, real Chromium, real servers. In one run, with
 * the scenarios interleaved round by round so that machine noise hits them alike:
 *   direct             no worker: the page fetches the 50 resources from its own origin
 *   bound-same         worker binds each resource to a replica on the page's own origin
 *   observed           worker installed, no bindings: same-origin fetch() is fetched as is
 *                      by the worker, only to read a bindings header from the response
 *   direct-cross       no worker: the page fetches the resources from another origin (CORS)
 *   bound-cross        worker binds each (logical, same-origin) resource to that other origin
 *   passthrough-cross  worker installed, cross-origin requests without bindings: the worker
 *                      does not even call respondWith
 * Each request is timed in the page (fetch() start to body read), one at a time. The
 * added latency is the median of a scenario minus the median of its baseline. The worker
 * also reports how long choosing the replica took (`bindMs` of each decision).
 *
 * Run: npm run bench -- overhead   (writes docs/benchmarks/sw-overhead.json)
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
const OUTPUT = new URL('../../docs/benchmarks/sw-overhead.json', import.meta.url);

const paths = Array.from({ length: RESOURCES }, (_, i) => `/r/${i}.txt`);

function site(): Site {
  const result: Site = {
    '/index.html': { contentType: 'text/html; charset=utf-8', body: '<!doctype html><title>bench</title><!--webpp-->' },
    '/plain.html': { contentType: 'text/html; charset=utf-8', body: '<!doctype html><title>bench, no worker</title>' },
  };
  for (const path of paths) result[path] = { contentType: 'text/plain', body: `resource ${path} `.repeat(20) };
  return result;
}

async function main(): Promise<void> {
  // "s": one replica, bindings point each resource at itself (same origin as the page).
  const same = await Cluster.start({ site: site(), names: ['s'] });
  // "p" + "r": the directory binds the pages to p and every resource to r, so every binding
  // is cross-origin (r). p keeps the primary copies: its answer to a resource's logical URL
  // carries the resource's binding (a page's header binds only what the page references).
  const cross = await Cluster.start({
    site: site(),
    names: ['p', 'r'],
    entries: (origins) => [
      { logical: '/index.html', servers: [origins.p as string] },
      { logical: '/r/*', servers: [origins.r as string] },
    ],
  });
  // "u": no bindings header at all; the worker is installed but has nothing to bind.
  const unbound = await Cluster.start({ site: site(), names: ['u'] });
  unbound.bindingsOverride = () => undefined;
  const clusters = [same, cross, unbound];
  const browser = await chromium.launch(chromiumLaunchOptions);
  const contexts: BrowserContext[] = [];
  try {
    const newContext = async (): Promise<BrowserContext> => {
      const context = await browser.newContext();
      contexts.push(context);
      return context;
    };
    const r = cross.replica('r');
    const plainPage = await (await newContext()).newPage();
    await plainPage.goto(same.primary.url('/plain.html'));
    const samePage = await controlledPage(await newContext(), same.primary.url('/index.html'));
    const crossPage = await controlledPage(await newContext(), cross.primary.url('/index.html'));
    const unboundPage = await controlledPage(await newContext(), unbound.primary.url('/index.html'));

    const runs: [string, Page, string[]][] = [
      ['direct', plainPage, paths.map((path) => same.primary.url(path))],
      ['bound-same', samePage, paths.map((path) => same.primary.url(path))],
      ['observed', unboundPage, paths.map((path) => unbound.primary.url(path))],
      ['direct-cross', plainPage, paths.map((path) => r.url(path))],
      ['bound-cross', crossPage, paths.map((path) => cross.logicalUrl(path))],
      ['passthrough-cross', unboundPage, paths.map((path) => r.url(path))],
    ];
    const samples: Record<string, number[]> = Object.fromEntries(runs.map(([name]) => [name, []]));

    for (let round = 0; round < WARMUP_ROUNDS + ROUNDS; round++) {
      for (const [name, page, urls] of runs) {
        const times = await timeFetches(page, urls);
        if (round >= WARMUP_ROUNDS) samples[name]?.push(...times);
      }
      for (const cluster of clusters) for (const replica of cluster.replicas) replica.clearLog();
    }

    type Decision = { bindMs: number; workerMs: number; servedBy?: string; logicalUrl: string };
    const stateOf = (page: Page) =>
      page.evaluate(() =>
        (window as unknown as { webpp: { state(): Promise<{ decisions: Decision[]; counters: Record<string, number> }> } }).webpp.state(),
      );
    const [sameState, crossState, unboundState] = await Promise.all([stateOf(samePage), stateOf(crossPage), stateOf(unboundPage)]);
    const decisions = [...(sameState?.decisions ?? []), ...(crossState?.decisions ?? [])];
    const bindMs = decisions.map((decision) => decision.bindMs);
    const workerMs = decisions.map((decision) => decision.workerMs);
    const crossDecisions = (crossState?.decisions ?? []).filter((decision) => decision.logicalUrl.includes('/r/'));

    const scenario = (name: string) => {
      const values = samples[name] ?? [];
      return { requests: values.length, median_ms: round(median(values)), p95_ms: round(percentile(values, 95)) };
    };
    const added = (name: string, baseline: string): number => round(median(samples[name] ?? []) - median(samples[baseline] ?? []));
    const result = {
      benchmark: 'sw-overhead',
      description:
        'Added latency per request of the webpp service worker: 50 small resources on loopback, fetched one at a time from the page (fetch() start to body read), every scenario in the same run, interleaved round by round.',
      command: 'npm run bench -- overhead',
      date: new Date().toISOString(),
      machine: {
        cpus: cpus().length,
        model: cpus()[0]?.model ?? 'unknown',
        node: process.version,
        // Other work on this shared machine during the run (1, 5, 15 min averages).
        load_average: loadavg().map((value) => Math.round(value * 100) / 100),
      },
      chromium: browser.version(),
      rounds: ROUNDS,
      resources_per_round: RESOURCES,
      scenarios: Object.fromEntries(runs.map(([name]) => [name, scenario(name)])),
      added_median_ms: {
        bound_same_origin_vs_direct: added('bound-same', 'direct'),
        observed_same_origin_vs_direct: added('observed', 'direct'),
        bound_cross_origin_vs_direct_cross: added('bound-cross', 'direct-cross'),
        passthrough_cross_origin_vs_direct_cross: added('passthrough-cross', 'direct-cross'),
      },
      // Inside the worker, per bound request: choosing the replica (the paper's 15–26 ms
      // "binding" step), and all of the worker's own time (total minus the replica's TTFB).
      worker_bind_ms: { median: round(median(bindMs)), p95: round(percentile(bindMs, 95)), decisions: bindMs.length },
      worker_own_ms: { median: round(median(workerMs)), p95: round(percentile(workerMs, 95)), decisions: workerMs.length },
      checks: {
        bound_cross_served_by_r: crossDecisions.every((decision) => decision.servedBy === r.origin) && crossDecisions.length > 0,
        unbound_worker_bound_nothing: (unboundState?.counters.bound ?? -1) === 0,
      },
      paper_applet_binding_ms: { netscape_navigator_4: 15, internet_explorer_4: 26 },
      goal_added_ms: 1,
    };
    mkdirSync(new URL('.', OUTPUT), { recursive: true });
    writeFileSync(OUTPUT, `${JSON.stringify(result, null, 2)}\n`);
    console.log(JSON.stringify(result, null, 2));
  } finally {
    await Promise.all(contexts.map((context) => context.close()));
    await browser.close();
    await Promise.all(clusters.map((cluster) => cluster.stop()));
  }
}

function round(value: number): number {
  return Math.round(value * 1000) / 1000;
}

await main();
