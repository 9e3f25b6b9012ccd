/**
 * One run of the page-cost bench: fresh servers, a fresh browser, the pages loaded in
 * interleaved rounds under every configuration, then the per-request row. Returns every
 * sample; stats.ts turns them into rows.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type Browser } from '@playwright/test';
import { chromiumLaunchOptions } from '../../support/chromium.js';
import { workerStateFromController } from '../../support/webpp-page.js';
import {
  CONFIGURATIONS,
  fetchTimes,
  installWorker,
  measureLoad,
  openTab,
  stopAllWorkers,
  variantOf,
  wakeWorker,
  type Configuration,
  type LoadSample,
  type VariantTab,
} from './measure.js';
import { startServers } from './servers.js';
import { FAILED_ELEMENT_PAGE, PAGES, REQUEST_SIZES_BYTES, requestPath, writeSite, type Variant } from './site.js';
import { profileWarmWorker, type ProfileReport } from './profile.js';
import { measurePathFiles, type PathFilesReport } from './path-files.js';
import { measureWorkerStartup, type WorkerStartup } from './startup-trace.js';

export interface RunOptions {
  /** Interleaved rounds of page loads (each page once per configuration per round). */
  rounds: number;
  /** Unmeasured loads of every page per variant first (caches, bindings). */
  warmupLoads: number;
  /**
   * Idle time before each measured load, after its tab's worker was woken (or stopped): a
   * visitor who reads a page for a moment. Work a worker defers past a page's `load` (webpp's
   * timing report, its state write, IndexedDB batches at most `flushDelayMs` = 1 s later) is
   * then over before the next load starts, as it is for a visitor, instead of landing in it.
   */
  dwellMs: number;
  /** Per-request row: rounds, and sequential fetches per (size, path) in a round. */
  requestRounds: number;
  requestsPerRound: number;
  /** Cold starts traced for the worker's evaluation time, per worker. */
  startupTraces: number;
  /** `--per-request`: after the warm-up, the per-request row alone (no measured rounds, no start-up traces). */
  requestRowOnly?: boolean;
  log: (line: string) => void;
}

export interface LoadRecord extends LoadSample {
  page: string;
  configuration: Configuration;
  round: number;
}

/**
 * `webpp`: from a page of the site the worker saw loaded by the own origin (it may leave the
 * request to the browser: direct.ts); `webpp-answered`: from a page with a failed element,
 * whose requests the worker keeps (what a request costs when the worker takes it).
 */
export type RequestPath = 'direct' | 'bare-worker' | 'webpp' | 'webpp-answered';
interface RequestRecord {
  bytes: number;
  path: RequestPath;
  durationsMs: number[];
}

/** The worker's counters over the measured fetches of one path: answered, and left to the browser. */
interface WorkerCounts {
  intercepted: number;
  direct: number;
}
type RequestCounters = Record<'webpp' | 'webpp-answered', WorkerCounts | null>;

export interface RunResult {
  loads: LoadRecord[];
  requests: RequestRecord[];
  /** Which replica served the per-request row's URLs through webpp, counted from the worker's decisions. */
  requestServedBy: Record<string, number>;
  /** The per-request row through webpp, per path: requests the worker answered and requests it left to the browser (its counters; null when the worker restarted meanwhile). */
  requestCounters: RequestCounters;
  /** Who served the navigation of the page the row fetches from through webpp ('none' when the worker does not remember it): the own origin proves the page (direct.ts). */
  requestPageServedBy: string;
  /** How many loads of that page it took until the own origin served its navigation (at most ROW_PAGE_LOADS). */
  requestPageLoads: number;
  /** Which replica served the navigations the worker still remembers (its recent decisions), by replica name. */
  navigationServedBy: Record<string, number>;
  /** The webpp worker's counters after the page loads: requests it answered (`intercepted`) and bound ones it left to the browser (`direct`, sw/src/direct.ts). */
  workerCounters: { intercepted: number; bound: number; direct: number };
  startup: { webpp: WorkerStartup[]; bare: WorkerStartup[] };
}

/** Round r starts at a different configuration, so none always follows another. */
const rotate = <T>(items: readonly T[], by: number): T[] => items.map((_, index) => items[(index + by) % items.length] as T);

export async function runOnce(options: RunOptions): Promise<RunResult> {
  const workDir = mkdtempSync(join(tmpdir(), 'webpp-page-cost-'));
  const siteRoot = join(workDir, 'site');
  writeSite(siteRoot);
  const servers = await startServers(siteRoot, workDir);
  const logical = servers.origins[0] as string;
  const url = (variant: Variant, path: string): string => `${logical}/${variant}${path}`;
  let browser: Browser | undefined;
  try {
    browser = await chromium.launch(chromiumLaunchOptions);
    const tabs: Record<Variant, VariantTab> = { plain: await openTab(browser), bare: await openTab(browser), webpp: await openTab(browser) };
    const firstPage = PAGES[0]?.path as string;
    await installWorker(tabs.bare, url('bare', firstPage));
    await installWorker(tabs.webpp, url('webpp', firstPage));
    for (let load = 0; load < options.warmupLoads; load++) {
      for (const { path } of PAGES) for (const variant of ['plain', 'bare', 'webpp'] as const) await measureLoad(tabs[variant].page, url(variant, path));
    }
    options.log(`warmed up: ${options.warmupLoads} load(s) of ${PAGES.length} pages per variant`);

    const loads: LoadRecord[] = [];
    for (let round = 0; round < (options.requestRowOnly ? 0 : options.rounds); round++) {
      for (const [pageIndex, { page, path }] of PAGES.entries()) {
        for (const configuration of rotate(CONFIGURATIONS, round + pageIndex)) {
          const tab = tabs[variantOf(configuration)];
          if (configuration === 'webpp-cold') await stopAllWorkers(tab.cdp);
          else if (configuration !== 'no-worker') await wakeWorker(tab);
          await new Promise((resolve) => setTimeout(resolve, options.dwellMs));
          const sample = await measureLoad(tab.page, url(variantOf(configuration), path));
          loads.push({ ...sample, page, configuration, round });
        }
      }
      options.log(`round ${round + 1}/${options.rounds} done`);
    }

    // Before the request row fills the worker's recent decisions with its own.
    const navigationServedBy: Record<string, number> = {};
    const nameOf = (origin: string | undefined): string => (origin === undefined ? 'none' : (new URL(origin).hostname.split('.')[0] ?? origin));
    const afterLoads = await workerStateFromController(tabs.webpp.page);
    const { intercepted, bound, direct } = afterLoads.counters;
    const workerCounters = { intercepted, bound, direct };
    for (const decision of afterLoads.decisions) {
      if (decision.navigation) navigationServedBy[nameOf(decision.servedBy)] = (navigationServedBy[nameOf(decision.servedBy)] ?? 0) + 1;
    }

    const { records: requests, counters: requestCounters, pageServedBy, pageLoads: requestPageLoads } = await requestRow(tabs, logical, options);
    const requestPageServedBy = nameOf(pageServedBy);
    const state = await workerStateFromController(tabs.webpp.page);
    const requestServedBy: Record<string, number> = {};
    for (const decision of state.decisions) {
      if (!new URL(decision.logicalUrl).pathname.startsWith('/r/')) continue;
      const key = `${decision.outcome}:${decision.servedBy ?? 'none'}`;
      requestServedBy[key] = (requestServedBy[key] ?? 0) + 1;
    }

    const startup = options.requestRowOnly
      ? { webpp: [], bare: [] }
      : await measureWorkerStartup(browser, tabs, {
          webpp: url('webpp', '/h5bp-9.0.1/index.html'),
          bare: url('bare', '/h5bp-9.0.1/index.html'),
          traces: options.startupTraces,
        });
    return { loads, requests, requestServedBy, requestCounters, requestPageServedBy, requestPageLoads, navigationServedBy, workerCounters, startup };
  } finally {
    await browser?.close();
    await servers.stop();
    rmSync(workDir, { recursive: true, force: true });
  }
}

/** The page the per-request row fetches from, loaded first in each tab: a site owner's page fetching a file of its own origin. */
const REQUEST_ROW_PAGE = '/h5bp-9.0.1/index.html';
/**
 * Loads of that page at most in the webpp tab, until the own origin served its navigation:
 * the worker leaves a page's requests to the browser only then (direct.ts, proof of life),
 * and a plan may send a navigation to another replica (one predicted faster, which a loaded
 * machine makes likely). In the fe32653 run that page was served elsewhere in two runs of
 * three, and the row measured the worker answering instead.
 */
const ROW_PAGE_LOADS = 5;

/**
 * The same resource fetched directly from an uncontrolled page, and from controlled pages
 * through a bare worker and through webpp (bound, by the directory, to the logical
 * origin's server alone: the URL a direct fetch reaches). Sequential, no HTTP cache. Each
 * tab first loads the same page (REQUEST_ROW_PAGE), so webpp's worker has seen the page it
 * serves, as on a site. `webpp-answered` fetches from a page with a failed element, which the
 * worker keeps. The worker's counters around each path's fetches say which it did.
 */
async function requestRow(
  tabs: Record<Variant, VariantTab>,
  logical: string,
  options: RunOptions,
): Promise<{ records: RequestRecord[]; counters: RequestCounters; pageServedBy: string | undefined; pageLoads: number }> {
  // A second page of the webpp visitor (same worker), whose failed element keeps its requests with the worker.
  const answered: VariantTab = { ...tabs.webpp, page: await tabs.webpp.context.newPage() };
  const paths: Record<RequestPath, VariantTab> = { direct: tabs.plain, 'bare-worker': tabs.bare, webpp: tabs.webpp, 'webpp-answered': answered };
  const records = new Map<string, RequestRecord>();
  for (const variant of ['plain', 'bare'] as const) await measureLoad(tabs[variant].page, `${logical}/${variant}${REQUEST_ROW_PAGE}`);
  const pageUrl = `${logical}/webpp${REQUEST_ROW_PAGE}`;
  let pageLoads = 0;
  let pageServedBy: string | undefined;
  do {
    await measureLoad(tabs.webpp.page, pageUrl);
    pageLoads++;
    pageServedBy = (await workerStateFromController(tabs.webpp.page)).decisions.findLast((decision) => decision.navigation && decision.logicalUrl === pageUrl)?.servedBy;
  } while (pageServedBy !== logical && pageLoads < ROW_PAGE_LOADS);
  await measureLoad(answered.page, `${logical}${FAILED_ELEMENT_PAGE}`);
  // Its image fails after `load` (site.ts); the page's own error listener runs after the page
  // script's, which posted the failure, so the worker has it before this state request.
  await answered.page.waitForFunction(() => document.body.dataset['failed'] === 'yes', undefined, { timeout: 20_000 });
  await workerStateFromController(answered.page);
  // Unmeasured: the worker learns the bindings of /r/… from the first answers.
  for (const bytes of REQUEST_SIZES_BYTES) for (const tab of Object.values(paths)) await fetchTimes(tab.page, `${logical}${requestPath(bytes)}`, 3);
  const counters: RequestCounters = { webpp: { intercepted: 0, direct: 0 }, 'webpp-answered': { intercepted: 0, direct: 0 } };
  for (let round = 0; round < options.requestRounds; round++) {
    for (const bytes of REQUEST_SIZES_BYTES) {
      for (const path of rotate(Object.keys(paths) as RequestPath[], round)) {
        const tab = paths[path];
        if (path !== 'direct') await wakeWorker(tab);
        const counted = path === 'webpp' || path === 'webpp-answered' ? path : undefined;
        const before = counted ? await workerStateFromController(tab.page) : undefined;
        const durations = await fetchTimes(tab.page, `${logical}${requestPath(bytes)}`, options.requestsPerRound);
        if (counted && before) {
          const after = await workerStateFromController(tab.page);
          const sum = counters[counted];
          counters[counted] =
            sum && after.startedAtMs === before.startedAtMs
              ? { intercepted: sum.intercepted + after.counters.intercepted - before.counters.intercepted, direct: sum.direct + after.counters.direct - before.counters.direct }
              : null;
        }
        const key = `${bytes}:${path}`;
        const record = records.get(key) ?? { bytes, path, durationsMs: [] };
        record.durationsMs.push(...durations);
        records.set(key, record);
      }
    }
  }
  await answered.page.close();
  return { records: [...records.values()], counters, pageServedBy, pageLoads };
}

/** The page-cost site on three servers and a Chromium, for `body`; all torn down after it. */
async function withSiteAndBrowser<T>(body: (browser: Browser, logical: string) => Promise<T>): Promise<T> {
  const workDir = mkdtempSync(join(tmpdir(), 'webpp-page-cost-'));
  const siteRoot = join(workDir, 'site');
  writeSite(siteRoot);
  const servers = await startServers(siteRoot, workDir);
  let browser: Browser | undefined;
  try {
    browser = await chromium.launch(chromiumLaunchOptions);
    return await body(browser, servers.origins[0] as string);
  } finally {
    await browser?.close();
    await servers.stop();
    rmSync(workDir, { recursive: true, force: true });
  }
}

/**
 * `--profile`: the warm webpp worker under V8's CPU profiler (profile.ts), on the pages with
 * the most resources and on the per-request row's 50 KB URL.
 */
export async function profileOnce(options: { loads: number; fetches: number; log: (line: string) => void }): Promise<ProfileReport[]> {
  return withSiteAndBrowser(async (browser, logical) => {
    const reports: ProfileReport[] = [];
    const fetchUrl = `${logical}${requestPath(REQUEST_SIZES_BYTES[1])}`;
    for (const variant of ['webpp', 'bare'] as const) {
      const tab = await openTab(browser);
      const pageUrls = ['/demo/index.html', '/bootstrap-creative/index.html', '/mdn/javascript/building-blocks/gallery/index.html'].map((path) => `${logical}/${variant}${path}`);
      await installWorker(tab, pageUrls[0] as string);
      for (let load = 0; load < 2; load++) for (const url of pageUrls) await measureLoad(tab.page, url);
      await fetchTimes(tab.page, fetchUrl, 5);
      options.log(`${variant}: warmed up; profiling`);
      reports.push(...(await profileWarmWorker(browser, tab, { worker: variant, pageUrls, loads: options.loads, fetchUrl, fetches: options.fetches })));
      await tab.context.close();
    }
    return reports;
  });
}

/** `--path-files`: the source files one request crosses in the warm webpp worker (path-files.ts). */
export async function pathFilesOnce(options: { log: (line: string) => void }): Promise<PathFilesReport> {
  return withSiteAndBrowser(async (browser, logical) => {
    const tab = await openTab(browser);
    const pageUrl = `${logical}/webpp/demo/index.html`;
    await installWorker(tab, pageUrl);
    for (let load = 0; load < 2; load++) await measureLoad(tab.page, pageUrl);
    const fetchUrl = `${logical}${requestPath(REQUEST_SIZES_BYTES[1])}`;
    await fetchTimes(tab.page, fetchUrl, 5);
    options.log('webpp: warmed up; measuring coverage of one request');
    return measurePathFiles(browser, tab, fetchUrl);
  });
}
