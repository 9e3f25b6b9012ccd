/**
 * Which source files one request crosses in the warm worker (issue 26 §2, "a reader follows
 * one request"): V8's precise coverage (call counts) of the worker, over one fetch of the
 * per-request row's 50 KB URL from a controlled page and the second after it (the learn
 * stage's background work), mapped to source files through the bundle's source map.
 *
 *   npm run bench page-cost -- --path-files
 *
 * To measure another build of the worker, point the servers at its bundle folder
 * (WEBPP_SW_BUNDLE_DIR, with webpp-sw.js.map beside it). The worker is reached through the
 * browser's DevTools target of the service worker (Target.attachToTarget, messages relayed
 * by Target.sendMessageToTarget).
 */
import type { Browser, CDPSession } from '@playwright/test';
import { join } from 'node:path';
import { fetchTimes, type VariantTab } from './measure.js';
import { BundleMap } from './profile.js';

const repoRoot = new URL('../../../', import.meta.url).pathname;
/** After the page has its body: the learn stage's background work (refreshes, state writes) runs in this window. */
const SETTLE_MS = 1_000;
const COMMAND_TIMEOUT_MS = 10_000;

interface CoverageFunction {
  functionName: string;
  ranges: { startOffset: number; endOffset: number; count: number }[];
}
interface ScriptCoverage {
  url: string;
  functions: CoverageFunction[];
}

export interface PathFilesReport {
  what: string;
  bundleDir: string;
  /** Source files with at least one function run, by package. */
  swFiles: string[];
  coreFiles: string[];
  otherFiles: string[];
  counts: { sw: number; core: number; other: number };
  /** Functions run, per file (a function counts once however often it ran). */
  functionsPerFile: Record<string, number>;
}

/** A DevTools session with the service worker target, through the browser's session. */
async function workerSession(browser: Browser, scriptSuffix: string): Promise<{ send: (method: string, params?: object) => Promise<unknown>; close: () => Promise<void> }> {
  const cdp: CDPSession = await browser.newBrowserCDPSession();
  const { targetInfos } = (await cdp.send('Target.getTargets')) as { targetInfos: { targetId: string; type: string; url: string }[] };
  const target = targetInfos.find((info) => info.type === 'service_worker' && new URL(info.url).pathname.endsWith(scriptSuffix));
  if (!target) throw new Error(`path-files: no running service worker ${scriptSuffix} (targets: ${targetInfos.map((info) => `${info.type} ${info.url}`).join(', ')})`);
  const { sessionId } = await cdp.send('Target.attachToTarget', { targetId: target.targetId, flatten: false });
  let nextId = 1;
  const pending = new Map<number, { resolve: (value: unknown) => void; reject: (error: Error) => void }>();
  cdp.on('Target.receivedMessageFromTarget', (event: { sessionId: string; message: string }) => {
    if (event.sessionId !== sessionId) return;
    const message = JSON.parse(event.message) as { id?: number; result?: unknown; error?: { message: string } };
    const waiter = message.id === undefined ? undefined : pending.get(message.id);
    if (!waiter) return;
    pending.delete(message.id as number);
    if (message.error) waiter.reject(new Error(message.error.message));
    else waiter.resolve(message.result);
  });
  const send = (method: string, params: object = {}): Promise<unknown> =>
    new Promise((resolve, reject) => {
      const id = nextId++;
      const timer = setTimeout(() => (pending.delete(id), reject(new Error(`path-files: ${method} timed out`))), COMMAND_TIMEOUT_MS);
      pending.set(id, { resolve: (value) => (clearTimeout(timer), resolve(value)), reject: (error) => (clearTimeout(timer), reject(error)) });
      void cdp.send('Target.sendMessageToTarget', { sessionId, message: JSON.stringify({ id, method, params }) }).catch(reject);
    });
  return { send, close: () => cdp.detach() };
}

/** Line and column (0-based) of each offset of `text`. */
function positionOf(text: string): (offset: number) => { line: number; column: number } {
  const lineStarts = [0];
  for (let index = 0; index < text.length; index++) if (text.charCodeAt(index) === 10) lineStarts.push(index + 1);
  return (offset) => {
    let low = 0;
    let high = lineStarts.length - 1;
    while (low < high) {
      const middle = (low + high + 1) >> 1;
      if ((lineStarts[middle] as number) <= offset) low = middle;
      else high = middle - 1;
    }
    return { line: low, column: offset - (lineStarts[low] as number) };
  };
}

export async function measurePathFiles(browser: Browser, tab: VariantTab, fetchUrl: string): Promise<PathFilesReport> {
  const bundleDir = process.env['WEBPP_SW_BUNDLE_DIR'] ?? join(repoRoot, 'sw/bundle');
  const map = new BundleMap(join(bundleDir, 'webpp-sw.js.map'));
  const session = await workerSession(browser, '/webpp-sw.js');
  try {
    await session.send('Profiler.enable');
    await session.send('Profiler.startPreciseCoverage', { callCount: true, detailed: false });
    await fetchTimes(tab.page, fetchUrl, 3); // code the coverage start deoptimised runs again first
    await new Promise((resolve) => setTimeout(resolve, SETTLE_MS));
    await session.send('Profiler.takePreciseCoverage'); // resets the counts
    await fetchTimes(tab.page, fetchUrl, 1);
    await new Promise((resolve) => setTimeout(resolve, SETTLE_MS));
    const { result } = (await session.send('Profiler.takePreciseCoverage')) as { result: ScriptCoverage[] };
    await session.send('Profiler.stopPreciseCoverage');
    const script = result.find((entry) => new URL(entry.url, 'http://x').pathname.endsWith('/webpp-sw.js'));
    if (!script) throw new Error('path-files: no coverage of webpp-sw.js');
    const text = await tab.page.evaluate((url) => fetch(url).then((response) => response.text()), script.url);
    const locate = positionOf(text);
    const functionsPerFile: Record<string, number> = {};
    for (const fn of script.functions) {
      const range = fn.ranges[0];
      if (!range || range.count === 0 || range.startOffset === 0) continue; // not run, or the script's top level
      const { line, column } = locate(range.startOffset);
      const { source } = map.locate(line, column);
      functionsPerFile[source] = (functionsPerFile[source] ?? 0) + 1;
    }
    const files = Object.keys(functionsPerFile).sort();
    const sw = files.filter((file) => /(^|\/)sw\/src\//.test(file) || file.startsWith('src/'));
    const core = files.filter((file) => /packages\/core\/(src|dist)\//.test(file));
    const other = files.filter((file) => !sw.includes(file) && !core.includes(file));
    return {
      what: `one sequential fetch of ${new URL(fetchUrl).pathname} from a controlled page, warm worker, and the ${SETTLE_MS} ms after it`,
      bundleDir,
      swFiles: sw,
      coreFiles: core,
      otherFiles: other,
      counts: { sw: sw.length, core: core.length, other: other.length },
      functionsPerFile,
    };
  } finally {
    await session.close();
  }
}
