/**
 * Cost of content integrity per request (docs/service-worker.md, "Integrity"): the worker
 * reads a replica's body whole, hashes it with crypto.subtle and only then hands it on.
 *
 * Two clusters of real @webpp/origin servers over the same site folder, in one run: "on"
 * sends the SHA-256 digest of every file in its bindings header, "off" sends none
 * (contentDigests: false). In each, the page is on its own origin `a` and the resources
 * only on the replica `r`, so the worker binds every resource to `r` (another origin: the
 * bodies that get checked). A page fetches N resources one at a time (fetch() start to body read), the two
 * scenarios interleaved round by round. Three runs; for each, the median per request of
 * both, and their ratio. Reported: the median and the range of the three.
 *
 * Run: npm run bench -- integrity   (writes docs/benchmarks/integrity.json)
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium } from '@playwright/test';
import { median, timeFetches } from './support/page-timing.js';
import type { Browser, Page } from '@playwright/test';
import { chromiumLaunchOptions } from '../../e2e/support/chromium.js';
import { Cluster } from '../../e2e/support/cluster/index.js';

const RESOURCES = 40;
const SIZES_BYTES = [4 * 1024, 64 * 1024, 512 * 1024];
const ROUNDS = Number(process.env.WEBPP_BENCH_ROUNDS ?? 6);
const RUNS = 3;
const WARMUP_ROUNDS = 1;
const OUTPUT = new URL('../../docs/benchmarks/integrity.json', import.meta.url);

interface Counters {
  bound: number;
  bodiesVerified: number;
  integrityFailures: number;
}
interface State {
  counters: Counters;
  decisions: { servedBy?: string; logicalUrl: string }[];
}

function round(value: number): number {
  return Math.round(value * 1000) / 1000;
}

function writeSite(): string {
  const root = mkdtempSync(join(tmpdir(), 'webpp-integrity-bench-'));
  mkdirSync(join(root, 'r'));
  const links: string[] = [];
  for (const size of SIZES_BYTES) {
    for (let i = 0; i < RESOURCES; i++) {
      writeFileSync(join(root, 'r', `${size}-${i}.bin`), randomBytes(size));
      links.push(`<a href="/r/${size}-${i}.bin">${i}</a>`);
    }
  }
  // The page links every resource: the origin sends their digests with it.
  writeFileSync(
    join(root, 'index.html'),
    `<!doctype html><meta charset="utf-8"><title>integrity bench</title><script src="/webpp.js" async></script>${links.join(' ')}`,
  );
  return root;
}

function state(page: Page): Promise<State> {
  return page.evaluate(() => (window as unknown as { webpp: { state(): Promise<State> } }).webpp.state());
}

/** A controlled page of the cluster whose worker binds the resources to `r`. */
async function preparedPage(browser: Browser, cluster: Cluster, urls: string[]): Promise<Page> {
  const page = await (await browser.newContext()).newPage();
  await page.goto(cluster.logicalUrl('/index.html'));
  await page.waitForFunction(() => (window as { webpp?: unknown }).webpp !== undefined);
  await page.evaluate(() => (window as unknown as { webpp: { controlled(): Promise<void> } }).webpp.controlled());
  await page.reload(); // observed: bindings (and digests) from the own origin
  const r = cluster.replica('r').origin;
  for (let i = 0; i < 20; i++) {
    await timeFetches(page, urls.slice(0, 5));
    if ((await state(page)).decisions.at(-1)?.servedBy === r) return page;
  }
  throw new Error('the worker never preferred replica r');
}

async function main(): Promise<void> {
  const root = writeSite();
  // The page on `a`; the resources only on `r`, another origin.
  const entries = (origins: Record<string, string>) => [
    { logical: '/index.html', servers: [origins.a as string] },
    { logical: '/r/*', servers: [origins.r as string] },
  ];
  const clusters = {
    on: await Cluster.start({ root, names: ['a', 'r'], entries, origin: { contentDigests: true } }),
    off: await Cluster.start({ root, names: ['a', 'r'], entries, origin: { contentDigests: false } }),
  };
  const browser = await chromium.launch(chromiumLaunchOptions);
  try {
    const bySize: Record<string, unknown> = {};
    for (const size of SIZES_BYTES) {
      const paths = Array.from({ length: RESOURCES }, (_, i) => `/r/${size}-${i}.bin`);
      const runs: { on_median_ms: number; off_median_ms: number; ratio: number; added_ms: number; requests: number }[] = [];
      const checks = { on_verified: 0, on_failures: 0, off_verified: 0, on_served_by_r: true, off_served_by_r: true };
      for (let run = 0; run < RUNS; run++) {
        const pages = {
          on: await preparedPage(browser, clusters.on, paths.map((path) => clusters.on.logicalUrl(path))),
          off: await preparedPage(browser, clusters.off, paths.map((path) => clusters.off.logicalUrl(path))),
        };
        const samples = { on: [] as number[], off: [] as number[] };
        const before = { on: (await state(pages.on)).counters, off: (await state(pages.off)).counters };
        for (let i = 0; i < WARMUP_ROUNDS + ROUNDS; i++) {
          for (const name of ['on', 'off'] as const) {
            const times = await timeFetches(pages[name], paths.map((path) => clusters[name].logicalUrl(path)));
            if (i >= WARMUP_ROUNDS) samples[name].push(...times);
          }
        }
        for (const name of ['on', 'off'] as const) {
          const after = await state(pages[name]);
          const verified = after.counters.bodiesVerified - before[name].bodiesVerified;
          if (name === 'on') {
            checks.on_verified += verified;
            checks.on_failures += after.counters.integrityFailures;
          } else {
            checks.off_verified += verified;
          }
          const r = clusters[name].replica('r').origin;
          const served = after.decisions.filter((decision) => decision.logicalUrl.includes('/r/'));
          if (!served.every((decision) => decision.servedBy === r)) checks[`${name}_served_by_r`] = false;
          await pages[name].context().close();
        }
        const on = median(samples.on);
        const off = median(samples.off);
        runs.push({ on_median_ms: round(on), off_median_ms: round(off), ratio: round(on / off), added_ms: round(on - off), requests: samples.on.length });
      }
      const ratios = runs.map((run) => run.ratio);
      const added = runs.map((run) => run.added_ms);
      bySize[String(size)] = {
        body_bytes: size,
        runs,
        ratio_on_vs_off: { median: median(ratios), min: Math.min(...ratios), max: Math.max(...ratios) },
        added_ms_per_request: { median: median(added), min: Math.min(...added), max: Math.max(...added) },
        checks,
      };
    }
    const result = {
      benchmark: 'integrity',
      description:
        'Cost per request of checking replica bodies against SHA-256 digests from the own origin: digests on vs off, same site, same run, interleaved; each request fetched alone by the page (fetch() start to body read) and bound to a replica on another origin.',
      command: 'npm run bench -- integrity',
      date: new Date().toISOString(),
      machine: { cpus: cpus().length, model: cpus()[0]?.model ?? 'unknown', node: process.version, load_average: loadavg().map((v) => round(v)) },
      chromium: browser.version(),
      resources_per_round: RESOURCES,
      rounds_per_run: ROUNDS,
      runs: RUNS,
      by_body_bytes: bySize,
    };
    mkdirSync(new URL('.', OUTPUT), { recursive: true });
    writeFileSync(OUTPUT, `${JSON.stringify(result, null, 2)}\n`);
    console.log(JSON.stringify(result, null, 2));
  } finally {
    await browser.close();
    await Promise.all([clusters.on.stop(), clusters.off.stop()]);
    rmSync(root, { recursive: true, force: true });
  }
}

await main();
