/**
 * One page load as a visitor sees it, and whether it was whole: the navigation succeeded
 * with a status below 400, `load` came within the bound, every image decoded at its size,
 * the style sheet applied, the script ran, the 1 MiB file arrived with the right length and
 * SHA-256, and no resource (Resource Timing) answered with a status of 400 or more. Apart
 * from those checks, the page's own resources that failed with a network error and were never
 * loaded (network-errors.ts): Resource Timing gives them status 0, not ≥ 400.
 *
 * The time of a load runs from the navigation's start to `load` and, on pages that fetch
 * the 1 MiB file, to that file's check: what the visitor waits for.
 */
import type { Page } from '@playwright/test';
import { unrecoveredNetworkErrors, type StatusEntry } from './network-errors.js';
import { TITLE_COLOR } from './site.js';

interface ResourceFailure {
  url: string;
  why: string;
}

export interface PageLoadResult {
  path: string;
  ok: boolean;
  /** Set when the navigation itself failed (error, status ≥ 400 or no `load` in time). */
  navigationError?: string;
  failedResources: ResourceFailure[];
  /** The page's own resources that failed with a network error (status 0) and were not loaded again (network-errors.ts); not in failedResources, not in ok. */
  networkErrors: string[];
  /** Navigation start to `load` (and the 1 MiB file's check), in ms; undefined if no `load`. */
  loadMs?: number;
  slowest?: SlowestResource;
  /** Every Resource Timing entry of the load (and the navigation's): [path, startTime, responseStart, responseEnd] in ms. */
  timings?: [string, number, number, number][];
  startedAtMs: number;
}

/** The resource (or the page itself) that took longest, by Resource Timing. */
interface SlowestResource {
  path: string;
  durationMs: number;
}

interface PageChecks {
  failures: ResourceFailure[];
  slowest: SlowestResource;
  timings: [string, number, number, number][];
  statuses: StatusEntry[];
}

/** Runs in the page: the visitor-visible checks. */
async function checkInPage(args: { titleColor: string; bigSha256: string; bigBytes: number; boundMs: number }): Promise<PageChecks> {
  const failures: ResourceFailure[] = [];
  for (const image of Array.from(document.images)) {
    const expectedWidth = Number(image.dataset.w);
    if (!image.complete || image.naturalWidth === 0 || image.naturalWidth !== expectedWidth) {
      failures.push({ url: image.src, why: `image not decoded (naturalWidth ${image.naturalWidth}, complete ${image.complete})` });
    }
  }
  const title = document.getElementById('title');
  if (!title || getComputedStyle(title).color !== args.titleColor) {
    failures.push({ url: new URL('/css/site.css', location.href).href, why: `style not applied (color ${title ? getComputedStyle(title).color : 'no title'})` });
  }
  type BigFileCheck = { status?: number; bytes?: number; sha256?: string; error?: string };
  const page = window as unknown as { appLoaded?: boolean; chaosBigFile?: Promise<BigFileCheck> };
  if (page.appLoaded !== true) failures.push({ url: new URL('/js/app.js', location.href).href, why: 'script did not run' });
  if (document.body.dataset.big === '1' && page.chaosBigFile) {
    const timeout = new Promise<BigFileCheck>((resolve) => setTimeout(() => resolve({ error: `no answer within ${args.boundMs} ms` }), args.boundMs));
    const big = await Promise.race([page.chaosBigFile, timeout]);
    const url = new URL('/files/big.bin', location.href).href;
    if (big.error !== undefined) failures.push({ url, why: `1 MiB file: ${big.error}` });
    else if (big.bytes !== args.bigBytes || big.sha256 !== args.bigSha256) failures.push({ url, why: `1 MiB file: ${big.bytes} bytes, sha-256 ${big.sha256}` });
  }
  const statuses: [string, number, string][] = [];
  for (const entry of performance.getEntriesByType('resource') as PerformanceResourceTiming[]) {
    const status = (entry as PerformanceResourceTiming & { responseStatus?: number }).responseStatus ?? 0;
    statuses.push([entry.name, status, entry.initiatorType]);
    if (status >= 400) failures.push({ url: entry.name, why: `status ${status}` });
  }
  let slowest = { path: location.pathname, durationMs: 0 };
  const timings: [string, number, number, number][] = [];
  for (const entry of performance.getEntries() as PerformanceResourceTiming[]) {
    if (entry.entryType !== 'resource' && entry.entryType !== 'navigation') continue;
    timings.push([new URL(entry.name).pathname, Math.round(entry.startTime), Math.round(entry.responseStart), Math.round(entry.responseEnd)]);
    if (entry.duration > slowest.durationMs) slowest = { path: new URL(entry.name).pathname, durationMs: Math.round(entry.duration) };
  }
  return { failures, slowest, timings, statuses };
}

function uniqueByUrl(failures: ResourceFailure[]): ResourceFailure[] {
  const seen = new Map<string, ResourceFailure>();
  for (const failure of failures) if (!seen.has(failure.url)) seen.set(failure.url, failure);
  return [...seen.values()];
}

export async function loadPage(
  page: Page,
  url: string,
  expected: { bigSha256: string; bigBytes: number },
  boundMs: number,
): Promise<PageLoadResult> {
  const path = new URL(url).pathname;
  const startedAtMs = Date.now();
  try {
    const response = await page.goto(url, { waitUntil: 'load', timeout: boundMs });
    if (!response) return { path, ok: false, navigationError: 'no response', failedResources: [], networkErrors: [], startedAtMs };
    if (response.status() >= 400) {
      return { path, ok: false, navigationError: `status ${response.status()}`, failedResources: [], networkErrors: [], startedAtMs };
    }
    const remainingMs = Math.max(1_000, boundMs - (Date.now() - startedAtMs));
    const checks = await page.evaluate(checkInPage, { titleColor: TITLE_COLOR, ...expected, boundMs: remainingMs });
    const loadMs = Date.now() - startedAtMs;
    const failedResources = uniqueByUrl(checks.failures);
    const networkErrors = unrecoveredNetworkErrors(checks.statuses, new URL(url).origin);
    return { path, ok: failedResources.length === 0, failedResources, networkErrors, loadMs, slowest: checks.slowest, timings: checks.timings, startedAtMs };
  } catch (error) {
    return { path, ok: false, navigationError: (error as Error).message.split('\n')[0], failedResources: [], networkErrors: [], startedAtMs };
  }
}
