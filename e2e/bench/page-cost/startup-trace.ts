/**
 * The worker's start-up, read from a Chromium trace of a navigation with the worker stopped:
 * the `EvaluateScript` event of the worker script on the "ServiceWorker thread" (top-level
 * evaluation: what every worker start pays, with V8's code cache), its `v8.compile`, and the
 * navigation's `fetchStart − workerStart` (the whole start-up the page waited for). The trace
 * has no CPU profiler on, so it barely slows the worker down.
 */
import type { Browser } from '@playwright/test';
import { measureLoad, stopAllWorkers, type VariantTab } from './measure.js';
import type { Variant } from './site.js';

export interface WorkerStartup {
  evaluateMs: number;
  compileMs: number;
  /** The navigation's fetchStart − workerStart, in the traced load. */
  startupMs: number;
  /**
   * The first fetch event's dispatch → the worker's first own request: what the worker does
   * before it asks the network for the navigation (webpp: reading its state from IndexedDB).
   */
  firstRequestAfterDispatchMs: number;
}

interface TraceEvent {
  name: string;
  ph: string;
  pid: number;
  tid: number;
  ts: number;
  dur?: number;
  args?: { name?: string; data?: { url?: string }; fileName?: string };
}

const CATEGORIES = ['devtools.timeline', 'v8', 'disabled-by-default-devtools.timeline', 'ServiceWorker'];

/** EvaluateScript and v8.compile of the script whose URL ends with `scriptSuffix`, on the ServiceWorker thread (ms). */
export function workerScriptTimes(events: readonly TraceEvent[], scriptSuffix: string): Omit<WorkerStartup, 'startupMs'> {
  const swThreads = new Set(events.filter((event) => event.ph === 'M' && event.name === 'thread_name' && event.args?.name === 'ServiceWorker thread').map((event) => `${event.pid}:${event.tid}`));
  const onThread = events.filter((event) => swThreads.has(`${event.pid}:${event.tid}`));
  const ofScript = onThread.filter((event) => event.ph === 'X' && (event.args?.data?.url ?? '').endsWith(scriptSuffix));
  const sumMs = (name: string): number => ofScript.filter((event) => event.name === name).reduce((total, event) => total + (event.dur ?? 0) / 1000, 0);
  const firstTs = (name: string): number => Math.min(...onThread.filter((event) => event.name === name).map((event) => event.ts));
  const dispatchTs = firstTs('ServiceWorkerGlobalScope::DispatchFetchEventInternal');
  const requestTs = firstTs('ResourceSendRequest');
  return {
    evaluateMs: sumMs('EvaluateScript'),
    compileMs: sumMs('v8.compile'),
    firstRequestAfterDispatchMs: Number.isFinite(dispatchTs) && Number.isFinite(requestTs) ? (requestTs - dispatchTs) / 1000 : Number.NaN,
  };
}

export async function measureWorkerStartup(
  browser: Browser,
  tabs: Record<Variant, VariantTab>,
  options: { webpp: string; bare: string; traces: number },
): Promise<{ webpp: WorkerStartup[]; bare: WorkerStartup[] }> {
  const result: { webpp: WorkerStartup[]; bare: WorkerStartup[] } = { webpp: [], bare: [] };
  for (let trace = 0; trace < options.traces; trace++) {
    for (const variant of ['webpp', 'bare'] as const) {
      const tab = tabs[variant];
      await stopAllWorkers(tab.cdp);
      await browser.startTracing(undefined, { categories: CATEGORIES });
      let startupMs = Number.NaN;
      try {
        startupMs = (await measureLoad(tab.page, options[variant])).workerStartMs;
      } finally {
        const buffer = await browser.stopTracing();
        const parsed = JSON.parse(buffer.toString('utf8')) as { traceEvents: TraceEvent[] } | TraceEvent[];
        const events = Array.isArray(parsed) ? parsed : parsed.traceEvents;
        const times = workerScriptTimes(events, variant === 'webpp' ? '/webpp-sw.js' : '/bare-sw.js');
        result[variant].push({ ...times, startupMs });
      }
    }
  }
  return result;
}
