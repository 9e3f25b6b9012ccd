/**
 * What one page load costs, read in the page after its `load` event (Navigation Timing,
 * Resource Timing, Largest Contentful Paint), and the browser contexts of the four
 * configurations: `no-worker`, `bare-worker`, `webpp-warm` and `webpp-cold` (the same
 * visitor as warm, with its worker stopped through the DevTools protocol before the
 * navigation, as Chromium does after about 30 s idle).
 */
import type { Browser, BrowserContext, CDPSession, Page } from '@playwright/test';
import type { Variant } from './site.js';

export const CONFIGURATIONS = ['no-worker', 'bare-worker', 'webpp-warm', 'webpp-cold'] as const;
export type Configuration = (typeof CONFIGURATIONS)[number];

export const variantOf = (configuration: Configuration): Variant =>
  configuration === 'no-worker' ? 'plain' : configuration === 'bare-worker' ? 'bare' : 'webpp';

export interface LoadSample {
  /** Navigation start → end of the `load` event. */
  loadMs: number;
  /** The last Largest Contentful Paint candidate's time. */
  lcpMs: number;
  /** The latest `responseEnd` of the document and the resources the page itself loaded (not fetch()/XHR/beacons). */
  lastResourceMs: number;
  /** `fetchStart − workerStart` of the navigation: the worker's start-up when it was stopped (NaN without a worker). */
  workerStartMs: number;
  /** responseStart − fetchStart of the navigation: with a worker, its fetch event to its answer's head. */
  navigationResponseMs: number;
  resources: number;
}

const WAIT_MS = 20_000;
/** Buffered LCP entries reach a new observer in a task after observe(): wait this long for them. */
const LCP_SETTLE_MS = 50;

export async function measureLoad(page: Page, url: string): Promise<LoadSample> {
  await page.goto(url, { waitUntil: 'load', timeout: WAIT_MS });
  return page.evaluate(async (settleMs) => {
    // No named function in here: tsx would wrap it in a helper the page does not have.
    // loadEventEnd is set once the load handlers have returned.
    let nav = performance.getEntriesByType('navigation')[0] as PerformanceNavigationTiming | undefined;
    for (let tries = 0; tries < 100 && (nav?.loadEventEnd ?? 0) === 0; tries++) {
      await new Promise((resolve) => setTimeout(resolve, 10));
      nav = performance.getEntriesByType('navigation')[0] as PerformanceNavigationTiming | undefined;
    }
    if (!nav) throw new Error('no navigation entry');
    const lcpMs = await new Promise<number>((resolve) => {
      let last = Number.NaN;
      const observer = new PerformanceObserver((list) => {
        for (const entry of list.getEntries()) last = entry.startTime;
      });
      observer.observe({ type: 'largest-contentful-paint', buffered: true });
      setTimeout(() => {
        observer.disconnect();
        resolve(last);
      }, settleMs);
    });
    const resources = (performance.getEntriesByType('resource') as PerformanceResourceTiming[]).filter(
      (entry) => !['fetch', 'xmlhttprequest', 'beacon'].includes(entry.initiatorType),
    );
    return {
      loadMs: nav.loadEventEnd - nav.startTime,
      lcpMs,
      lastResourceMs: Math.max(nav.responseEnd, ...resources.map((entry) => entry.responseEnd)),
      workerStartMs: nav.workerStart > 0 ? nav.fetchStart - nav.workerStart : Number.NaN,
      navigationResponseMs: nav.responseStart - nav.fetchStart,
      resources: resources.length,
    };
  }, LCP_SETTLE_MS);
}

/** One browser context per variant, each with one tab that every load of the variant reuses. */
export interface VariantTab {
  context: BrowserContext;
  page: Page;
  cdp: CDPSession;
}

export async function openTab(browser: Browser): Promise<VariantTab> {
  const context = await browser.newContext({ serviceWorkers: 'allow', viewport: { width: 1280, height: 800 } });
  const page = await context.newPage();
  const cdp = await context.newCDPSession(page);
  return { context, page, cdp };
}

/** Opens a page of a worker variant and waits until a worker controls it. */
export async function installWorker(tab: VariantTab, url: string): Promise<void> {
  await tab.page.goto(url, { waitUntil: 'load', timeout: WAIT_MS });
  await tab.page.waitForFunction(() => navigator.serviceWorker.controller !== null, undefined, { timeout: WAIT_MS });
}

/**
 * Makes sure the tab's worker runs: a request from the controlled page starts it if it was
 * stopped (by a cold measurement, or by the browser's idle timeout).
 */
export async function wakeWorker(tab: VariantTab): Promise<void> {
  await tab.page.evaluate(() => fetch(location.href, { cache: 'no-store' }).then((response) => response.arrayBuffer()));
}

/** Stops every running worker through the DevTools protocol and waits until none runs (bounded). */
export async function stopAllWorkers(cdp: CDPSession): Promise<void> {
  const running = new Map<string, string>();
  const onUpdate = (event: { versions: { versionId: string; runningStatus: string }[] }): void => {
    for (const version of event.versions) running.set(version.versionId, version.runningStatus);
  };
  cdp.on('ServiceWorker.workerVersionUpdated', onUpdate);
  try {
    await cdp.send('ServiceWorker.enable');
    await cdp.send('ServiceWorker.stopAllWorkers');
    const deadlineMs = Date.now() + 5_000;
    while ([...running.values()].some((status) => status !== 'stopped') && Date.now() < deadlineMs) await new Promise((resolve) => setTimeout(resolve, 10));
  } finally {
    cdp.off('ServiceWorker.workerVersionUpdated', onUpdate);
    await cdp.send('ServiceWorker.disable');
  }
}

/** Sequential fetches of one URL from the page (no HTTP cache): each one's duration to the last body byte, in ms. */
export function fetchTimes(page: Page, url: string, count: number): Promise<number[]> {
  return page.evaluate(
    async ({ target, times }) => {
      const durations: number[] = [];
      for (let index = 0; index < times; index++) {
        const startMs = performance.now();
        const response = await fetch(target, { cache: 'no-store' });
        await response.arrayBuffer();
        durations.push(performance.now() - startMs);
      }
      return durations;
    },
    { target: url, times: count },
  );
}
