/**
 * Helpers for pages that run the webpp worker: reach `window.webpp` (the page script's API),
 * wait for conditions on the worker's state with bounded polling, and check that a page
 * rendered completely.
 */
import type { Page } from '@playwright/test';
import type { DecisionRecord, WorkerStateSnapshot } from '../../sw/src/messages.js';

export type { DecisionRecord, WorkerStateSnapshot };

interface WebppWindow {
  webpp?: {
    controlled(): Promise<void>;
    state(): Promise<WorkerStateSnapshot>;
    flush(): Promise<void>;
  };
}

/** Opens a URL and waits until the worker controls the page. */
export async function openControlled(page: Page, url: string): Promise<void> {
  await page.goto(url);
  await page.waitForFunction(() => (window as WebppWindow).webpp !== undefined);
  await page.evaluate(() => (window as WebppWindow).webpp?.controlled());
}

/** The worker's state, as the page script reports it. */
export function workerState(page: Page): Promise<WorkerStateSnapshot> {
  return page.evaluate(async () => {
    const api = (window as WebppWindow).webpp;
    if (!api) throw new Error('window.webpp is missing');
    return api.state();
  });
}

/**
 * The worker's state asked directly over a MessageChannel (sw/src/messages.ts), without the
 * page script: for pages whose own origin is down or that never load /webpp.js.
 */
export function workerStateFromController(page: Page): Promise<WorkerStateSnapshot> {
  return page.evaluate(
    () =>
      new Promise<WorkerStateSnapshot>((resolve, reject) => {
        const controller = navigator.serviceWorker.controller;
        if (!controller) return reject(new Error('page not controlled'));
        const channel = new MessageChannel();
        channel.port1.onmessage = (message) => resolve(message.data as WorkerStateSnapshot);
        controller.postMessage({ type: 'webpp:state' }, [channel.port2]);
      }),
  );
}

export function flushWorker(page: Page): Promise<void> {
  return page.evaluate(async () => (window as WebppWindow).webpp?.flush());
}

/**
 * Polls the worker's state until `predicate` holds; fails with the last state after
 * `timeoutMs`. `between` runs before each new poll (e.g. load something to drive the worker).
 */
export async function waitForState(
  page: Page,
  predicate: (state: WorkerStateSnapshot) => boolean,
  options: { timeoutMs?: number; intervalMs?: number; between?: () => Promise<void>; what?: string } = {},
): Promise<WorkerStateSnapshot> {
  const deadline = Date.now() + (options.timeoutMs ?? 20_000);
  let state = await workerState(page);
  while (!predicate(state)) {
    if (Date.now() > deadline) {
      throw new Error(
        `timed out waiting for ${options.what ?? 'worker state'}; last state: ${JSON.stringify(
          { servers: state.servers, counters: state.counters, bindings: state.bindings },
          null,
          1,
        )}`,
      );
    }
    if (options.between) await options.between();
    else await page.waitForTimeout(options.intervalMs ?? 100);
    state = await workerState(page);
  }
  return state;
}

/** Decisions newer than `afterId`. */
export function decisionsAfter(state: WorkerStateSnapshot, afterId: number): DecisionRecord[] {
  return state.decisions.filter((decision) => decision.id > afterId);
}

export function lastDecisionId(state: WorkerStateSnapshot): number {
  return state.decisions.reduce((max, decision) => Math.max(max, decision.id), 0);
}

/** What a user sees: the page's images decoded, its stylesheet applied, its script run. */
export async function pageRendered(page: Page): Promise<{ images: number; brokenImages: number; styled: boolean; scripted: boolean }> {
  await page.waitForLoadState('load');
  return page.evaluate(() => {
    const images = [...document.images];
    const title = document.getElementById('title');
    return {
      images: images.length,
      brokenImages: images.filter((image) => !image.complete || image.naturalWidth === 0).length,
      styled: title !== null && getComputedStyle(title).color === 'rgb(10, 20, 30)',
      scripted: (window as unknown as { appLoaded?: boolean }).appLoaded === true,
    };
  });
}

/**
 * Where the browser says the page's last request for the page script (/webpp.js) was answered
 * from (Resource Timing's `workerFinalSourceType`, Chromium's ServiceWorker static routing):
 * "cache" when the worker's static route answered it from the worker's copy without a fetch
 * event; "" when no static route matched (the fetch event answered it, or no worker).
 */
export function pageScriptSource(page: Page): Promise<string | undefined> {
  return page.evaluate(() => {
    const entries = performance.getEntriesByType('resource').filter((entry) => new URL(entry.name).pathname === '/webpp.js');
    return (entries.at(-1) as (PerformanceResourceTiming & { workerFinalSourceType?: string }) | undefined)?.workerFinalSourceType;
  });
}

/** Loads `url` until the worker knows `servers` replicas and its latest navigation was served by `origin`. */
export async function untilNavigationServedBy(page: Page, url: string, origin: string, servers = 3): Promise<void> {
  await openControlled(page, url);
  await waitForState(page, (state) => state.servers.length === servers && state.decisions.filter((d) => d.navigation).at(-1)?.servedBy === origin, {
    what: `navigations served by ${origin}`,
    between: async () => void (await page.reload()),
  });
}
