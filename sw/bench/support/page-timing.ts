/**
 * What the worker's benches share: statistics over timings, timing fetches inside a page,
 * and a page the worker controls (overhead, integrity and offline benches).
 */
import type { BrowserContext, Page } from '@playwright/test';

export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? (sorted[middle] as number) : ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2;
}

export function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] as number;
}

/** Times each request of `urls`, one after another, inside the page, body read in full. */
export function timeFetches(page: Page, urls: string[], cache: RequestCache = 'no-store'): Promise<number[]> {
  return page.evaluate(
    async ({ list, mode }) => {
      const times: number[] = [];
      for (const url of list) {
        const started = performance.now();
        const response = await fetch(url, { cache: mode });
        await response.arrayBuffer();
        times.push(performance.now() - started);
      }
      return times;
    },
    { list: urls, mode: cache },
  );
}

/** Opens `url`, waits for the worker to control the page, and reloads so that the navigation's bindings are learned. */
export async function controlledPage(context: BrowserContext, url: string): Promise<Page> {
  const page = await context.newPage();
  await page.goto(url);
  await page.waitForFunction(() => (window as { webpp?: unknown }).webpp !== undefined);
  await page.evaluate(() => (window as unknown as { webpp: { controlled(): Promise<void> } }).webpp.controlled());
  await page.reload();
  return page;
}
