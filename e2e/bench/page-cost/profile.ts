/**
 * Where the warm worker's time goes (issue 26 §1, `npm run bench page-cost -- --profile`):
 * a Chromium trace with V8's sampling CPU profiler on, taken while a controlled page loads
 * pages and fetches one URL sequentially through webpp. From the "ServiceWorker thread":
 *
 * - busy time: the thread's top-level tasks, per fetch event the worker answered;
 * - the CPU profile's samples, self and inclusive, by source file of the bundle (through
 *   sw/bundle/webpp-sw.js.map) and by function;
 * - per request of the fetch loop: page-side request → worker's own request to the server
 *   (ResourceSendRequest on the worker thread) → its response → the page's response,
 *   from the devtools.timeline network events, matched by order.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { decode, type SourceMapMappings } from '@jridgewell/sourcemap-codec';
import type { Browser } from '@playwright/test';
import { fetchTimes, measureLoad, wakeWorker, type VariantTab } from './measure.js';
import { median } from './stats.js';

const repoRoot = new URL('../../../', import.meta.url).pathname;
const CATEGORIES = ['devtools.timeline', 'v8', 'disabled-by-default-devtools.timeline', 'disabled-by-default-v8.cpu_profiler', 'ServiceWorker'];
/** V8's pseudo-frames that are not work done by the script. */
const NOT_WORK = new Set(['(idle)', '(program)', '(root)']);

interface CallFrame {
  functionName?: string;
  /** Absent on native and V8-internal frames. */
  url?: string;
  lineNumber: number;
  columnNumber: number;
}
interface ProfileNode {
  id: number;
  callFrame: CallFrame;
  parent?: number;
}
interface TraceEvent {
  name: string;
  ph: string;
  pid: number;
  tid: number;
  ts: number;
  dur?: number;
  id?: string;
  args?: {
    name?: string;
    data?: {
      url?: string;
      requestId?: string;
      cpuProfile?: { nodes?: ProfileNode[]; samples?: number[] };
      timeDeltas?: number[];
    };
  };
}

/** Maps a position of the minified bundle to its source file (and original name, when the map has one). */
export class BundleMap {
  private readonly sources: string[];
  private readonly names: string[];
  private readonly mappings: SourceMapMappings;

  constructor(mapFile: string) {
    const map = JSON.parse(readFileSync(mapFile, 'utf8')) as { sources: string[]; names: string[]; mappings: string };
    this.sources = map.sources.map((source) => source.replace(/^(\.\.\/)+/, ''));
    this.names = map.names;
    this.mappings = decode(map.mappings);
  }

  locate(line: number, column: number): { source: string; name: string | undefined } {
    const segments = this.mappings[line] ?? [];
    let found: (typeof segments)[number] | undefined;
    for (const segment of segments) {
      if (segment[0] > column) break;
      found = segment;
    }
    if (found?.length !== 4 && found?.length !== 5) return { source: '(bundle)', name: undefined };
    const name = found.length === 5 ? this.names[found[4]] : undefined;
    return { source: this.sources[found[1]] ?? '(bundle)', name };
  }
}

export interface ProfileReport {
  what: string;
  fetchEvents: number;
  /** Top-level task time on the worker thread per fetch event (ms). */
  busyPerFetchEventMs: number;
  /** Sampled CPU time in the worker script, per fetch event (ms). */
  scriptPerFetchEventMs: number;
  bySourceSelfMs: [string, number][];
  bySourceInclusiveMs: [string, number][];
  byFunctionSelfMs: [string, number][];
  /** Requests the worker sent itself, per fetch event, and those of them to URLs the page never asked for (path → count). */
  workerRequestsPerFetchEvent: number;
  workerOnlyRequests: Record<string, number>;
  /** Medians over the fetch loop's requests, when there is one (ms). */
  phases?: {
    pageToWorkerRequestMs: number;
    workerRequestToResponseMs: number;
    workerResponseToPageResponseMs: number;
    /** The worker's request finished (last body byte) → the page's request finished: the body's way through the worker. */
    workerFinishToPageFinishMs: number;
    pageTotalMs: number;
    requests: number;
  };
}

const top = (totals: Map<string, number>, count: number, perEvent: number): [string, number][] =>
  [...totals.entries()]
    .sort((a, b) => b[1] - a[1])
    .slice(0, count)
    .map(([key, ms]) => [key, Math.round((ms / perEvent) * 1000) / 1000]);

function analyse(events: readonly TraceEvent[], map: BundleMap, scriptSuffix: string, what: string, loopUrl: string | undefined): ProfileReport {
  const inBundle = (frame: CallFrame): boolean => (frame.url ?? '').endsWith(scriptSuffix);
  const swThreads = new Set(events.filter((event) => event.ph === 'M' && event.name === 'thread_name' && event.args?.name === 'ServiceWorker thread').map((event) => `${event.pid}:${event.tid}`));
  const onWorker = (event: TraceEvent): boolean => swThreads.has(`${event.pid}:${event.tid}`);
  const fetchEvents = events.filter((event) => onWorker(event) && event.ph === 'X' && event.name.startsWith('ServiceWorkerGlobalScope::DispatchFetchEventFor')).length;
  const busyMs = events.filter((event) => onWorker(event) && event.ph === 'X' && (event.name === 'RunTask' || event.name === 'ThreadControllerImpl::RunTask')).reduce((total, event) => total + (event.dur ?? 0) / 1000, 0);

  // CPU profile: the Profile event on the worker thread names the id of its chunks.
  // Ids are per process: a chunk belongs to the worker's profile by (pid, id).
  const profileKey = (event: TraceEvent): string => `${event.pid}:${event.id}`;
  const profileIds = new Set(events.filter((event) => event.name === 'Profile' && onWorker(event)).map(profileKey));
  const nodes = new Map<number, ProfileNode>();
  const self = new Map<string, number>();
  const inclusive = new Map<string, number>();
  const byFunction = new Map<string, number>();
  let scriptMs = 0;
  const sampleQueue: { node: number; deltaMs: number }[] = [];
  for (const event of events) {
    if (event.name !== 'ProfileChunk' || !profileIds.has(profileKey(event))) continue;
    for (const node of event.args?.data?.cpuProfile?.nodes ?? []) nodes.set(node.id, node);
    const samples = event.args?.data?.cpuProfile?.samples ?? [];
    const deltas = event.args?.data?.timeDeltas ?? [];
    samples.forEach((node, index) => sampleQueue.push({ node, deltaMs: (deltas[index] ?? 0) / 1000 }));
  }
  // A sample's time is the delta to the next sample.
  for (let index = 0; index + 1 < sampleQueue.length; index++) {
    const sample = sampleQueue[index] as { node: number };
    const ms = (sampleQueue[index + 1] as { deltaMs: number }).deltaMs;
    const node = nodes.get(sample.node);
    if (!node) continue;
    const place = (frame: CallFrame): { source: string; label: string } => {
      const name = frame.functionName === undefined || frame.functionName === '' ? undefined : frame.functionName;
      if (!inBundle(frame) || scriptSuffix !== '/webpp-sw.js') return { source: (frame.url ?? '') === '' ? `(${name ?? 'native'})` : '(other script)', label: name ?? '(anonymous)' };
      const located = map.locate(frame.lineNumber, frame.columnNumber);
      return { source: located.source, label: `${located.name ?? name ?? '(anonymous)'} @ ${located.source}` };
    };
    if (NOT_WORK.has(node.callFrame.functionName ?? '')) continue;
    const own = place(node.callFrame);
    self.set(own.source, (self.get(own.source) ?? 0) + ms);
    byFunction.set(own.label, (byFunction.get(own.label) ?? 0) + ms);
    const seen = new Set<string>();
    let inScript = false;
    for (let current: ProfileNode | undefined = node; current; current = current.parent === undefined ? undefined : nodes.get(current.parent)) {
      const where = place(current.callFrame);
      if (inBundle(current.callFrame)) inScript = true;
      if (!inBundle(current.callFrame) || seen.has(where.source)) continue;
      seen.add(where.source);
      inclusive.set(where.source, (inclusive.get(where.source) ?? 0) + ms);
    }
    if (inScript) scriptMs += ms;
  }
  const perEvent = Math.max(1, fetchEvents);
  const sends = events.filter((event) => event.name === 'ResourceSendRequest' && event.args?.data?.url !== undefined);
  const pathOf = (event: TraceEvent): string => {
    const url = new URL(event.args?.data?.url as string);
    return `${url.pathname}${url.search === '' ? '' : '?…'}${url.host.startsWith('a.') ? '' : ` (${url.host.split('.')[0]})`}`;
  };
  const pagePaths = new Set(sends.filter((event) => !onWorker(event)).map((event) => new URL(event.args?.data?.url as string).pathname));
  const workerSends = sends.filter(onWorker);
  const workerOnlyRequests: Record<string, number> = {};
  for (const event of workerSends) {
    if (pagePaths.has(new URL(event.args?.data?.url as string).pathname)) continue;
    const key = `${event.args?.data && 'requestMethod' in event.args.data ? String((event.args.data as { requestMethod?: string }).requestMethod) : ''} ${pathOf(event)}`.trim();
    workerOnlyRequests[key] = (workerOnlyRequests[key] ?? 0) + 1;
  }
  const report: ProfileReport = {
    what,
    fetchEvents,
    busyPerFetchEventMs: Math.round((busyMs / perEvent) * 1000) / 1000,
    scriptPerFetchEventMs: Math.round((scriptMs / perEvent) * 1000) / 1000,
    workerRequestsPerFetchEvent: Math.round((workerSends.length / perEvent) * 100) / 100,
    workerOnlyRequests,
    bySourceSelfMs: top(self, 20, perEvent),
    bySourceInclusiveMs: top(inclusive, 25, perEvent),
    byFunctionSelfMs: top(byFunction, 25, perEvent),
  };
  if (loopUrl !== undefined) report.phases = phases(events, onWorker, loopUrl);
  return report;
}

/** Page request → the worker's request → its response → the page's response, per request of the loop (ms). */
function phases(events: readonly TraceEvent[], onWorker: (event: TraceEvent) => boolean, loopUrl: string): ProfileReport['phases'] {
  const network = events.filter((event) => ['ResourceSendRequest', 'ResourceReceiveResponse', 'ResourceFinish'].includes(event.name));
  const byRequest = new Map<string, { worker: boolean; url?: string; sendTs?: number; responseTs?: number; finishTs?: number }>();
  for (const event of network) {
    const id = event.args?.data?.requestId;
    if (id === undefined) continue;
    const entry = byRequest.get(id) ?? { worker: onWorker(event) };
    if (event.name === 'ResourceSendRequest') {
      entry.sendTs = event.ts;
      if (event.args?.data?.url !== undefined) entry.url = event.args.data.url;
    } else if (event.name === 'ResourceReceiveResponse') entry.responseTs = event.ts;
    else entry.finishTs = event.ts;
    byRequest.set(id, entry);
  }
  const path = new URL(loopUrl).pathname;
  const ofPath = [...byRequest.values()].filter((entry) => entry.url !== undefined && new URL(entry.url).pathname === path && entry.sendTs !== undefined);
  const pageSide = ofPath.filter((entry) => !entry.worker).sort((a, b) => (a.sendTs ?? 0) - (b.sendTs ?? 0));
  const workerSide = ofPath.filter((entry) => entry.worker).sort((a, b) => (a.sendTs ?? 0) - (b.sendTs ?? 0));
  const toWorker: number[] = [];
  const inWorker: number[] = [];
  const back: number[] = [];
  const tail: number[] = [];
  const total: number[] = [];
  for (const page of pageSide) {
    // The worker's request for this page request: the first one sent after it, before the page's response.
    const worker = workerSide.find((candidate) => (candidate.sendTs ?? 0) >= (page.sendTs ?? 0) && (candidate.sendTs ?? 0) <= (page.responseTs ?? Number.POSITIVE_INFINITY));
    if (!worker || page.responseTs === undefined || worker.responseTs === undefined || worker.sendTs === undefined || page.sendTs === undefined) continue;
    toWorker.push((worker.sendTs - page.sendTs) / 1000);
    inWorker.push((worker.responseTs - worker.sendTs) / 1000);
    back.push((page.responseTs - worker.responseTs) / 1000);
    if (page.finishTs !== undefined && worker.finishTs !== undefined) {
      tail.push((page.finishTs - worker.finishTs) / 1000);
      total.push((page.finishTs - page.sendTs) / 1000);
    }
  }
  const r = (values: number[]): number => Math.round(median(values) * 100) / 100;
  return {
    pageToWorkerRequestMs: r(toWorker),
    workerRequestToResponseMs: r(inWorker),
    workerResponseToPageResponseMs: r(back),
    workerFinishToPageFinishMs: r(tail),
    pageTotalMs: r(total),
    requests: toWorker.length,
  };
}

async function traced(browser: Browser, work: () => Promise<void>): Promise<TraceEvent[]> {
  await browser.startTracing(undefined, { categories: CATEGORIES });
  try {
    await work();
  } catch (error) {
    await browser.stopTracing();
    throw error;
  }
  const buffer = await browser.stopTracing();
  const parsed = JSON.parse(buffer.toString('utf8')) as { traceEvents: TraceEvent[] } | TraceEvent[];
  return Array.isArray(parsed) ? parsed : parsed.traceEvents;
}

/** Profiles a warm worker (webpp's, or the bare one for comparison): page loads of `pageUrls` (`loads` each), then `fetches` sequential fetches of `fetchUrl`. */
export async function profileWarmWorker(
  browser: Browser,
  tab: VariantTab,
  options: { worker: 'webpp' | 'bare'; pageUrls: string[]; loads: number; fetchUrl: string; fetches: number },
): Promise<ProfileReport[]> {
  const suffix = options.worker === 'webpp' ? '/webpp-sw.js' : '/bare-sw.js';
  const map = new BundleMap(join(repoRoot, 'sw/bundle/webpp-sw.js.map'));
  await wakeWorker(tab);
  const pageEvents = await traced(browser, async () => {
    for (let load = 0; load < options.loads; load++) for (const url of options.pageUrls) await measureLoad(tab.page, url);
  });
  await wakeWorker(tab);
  const fetchEvents = await traced(browser, async () => {
    await fetchTimes(tab.page, options.fetchUrl, options.fetches);
  });
  return [
    analyse(pageEvents, map, suffix, `${options.worker}: page loads (${options.loads} × ${options.pageUrls.length} pages)`, undefined),
    analyse(fetchEvents, map, suffix, `${options.worker}: ${options.fetches} sequential fetches of ${new URL(options.fetchUrl).pathname}`, options.fetchUrl),
  ];
}
