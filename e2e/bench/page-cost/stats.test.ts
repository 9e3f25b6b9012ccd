import { describe, expect, it } from 'vitest';
import type { LoadRecord, RunResult } from './run.js';
import { goals, pageRows, requestRows, summary } from './stats.js';
import { workerScriptTimes } from './startup-trace.js';

function load(page: string, configuration: LoadRecord['configuration'], loadMs: number): LoadRecord {
  return { page, configuration, round: 0, loadMs, lcpMs: loadMs / 2, lastResourceMs: loadMs - 1, workerStartMs: Number.NaN, navigationResponseMs: 2, resources: 3 };
}

function run(loadsMs: Record<LoadRecord['configuration'], number[]>, requestsMs: { direct: number; webpp: number }): RunResult {
  const loads = Object.entries(loadsMs).flatMap(([configuration, times]) => times.map((ms) => load('p', configuration as LoadRecord['configuration'], ms)));
  return {
    loads,
    requests: [
      { bytes: 5120, path: 'direct', durationsMs: [requestsMs.direct] },
      { bytes: 5120, path: 'bare-worker', durationsMs: [requestsMs.direct + 0.5] },
      { bytes: 5120, path: 'webpp', durationsMs: [requestsMs.webpp] },
      { bytes: 5120, path: 'webpp-answered', durationsMs: [requestsMs.webpp + 2] },
    ],
    requestServedBy: {},
    requestCounters: { webpp: null, 'webpp-answered': null },
    requestPageServedBy: 'a',
    requestPageLoads: 1,
    navigationServedBy: {},
    workerCounters: { intercepted: 0, bound: 0, direct: 0 },
    startup: { webpp: [], bare: [] },
  };
}

describe('page-cost figures', () => {
  it("divides each configuration's median load by the same page's no-worker and bare-worker medians", () => {
    const rows = pageRows([run({ 'no-worker': [100, 90, 110], 'bare-worker': [120, 120, 500], 'webpp-warm': [150, 140, 160], 'webpp-cold': [240, 240, 240] }, { direct: 10, webpp: 12 })]);
    const warm = rows.find((row) => row.configuration === 'webpp-warm');
    expect(warm?.load_ms).toBe(150);
    expect(warm?.ratio_to_no_worker).toBe(1.5);
    expect(warm?.ratio_to_bare_worker).toBe(1.25);
    expect(rows.find((row) => row.configuration === 'webpp-cold')?.ratio_to_bare_worker).toBe(2);
    expect(warm?.lcp_ms).toBe(75);
  });

  it('takes the median over runs and keeps their range', () => {
    const runs = [100, 200, 130].map((warmMs) => run({ 'no-worker': [100], 'bare-worker': [100], 'webpp-warm': [warmMs], 'webpp-cold': [100] }, { direct: 10, webpp: 10 + warmMs / 100 }));
    const warm = pageRows(runs).find((row) => row.configuration === 'webpp-warm');
    expect(warm?.ratio_to_no_worker).toBe(1.3);
    expect(warm?.ratio_to_no_worker_range).toEqual([1, 2]);
    expect(warm?.loads).toBe(3);
    expect(requestRows(runs)[0]?.webpp_minus_direct_ms).toBe(1.3);
    expect(requestRows(runs)[0]?.webpp_answered_minus_direct_ms).toBe(3.3);
  });

  it('reports each goal as met or missed', () => {
    const runs = [run({ 'no-worker': [100], 'bare-worker': [100], 'webpp-warm': [104], 'webpp-cold': [112] }, { direct: 10, webpp: 10.5 })];
    const rows = pageRows(runs);
    const [warm, cold, perRequest, bundle] = goals(summary(rows), requestRows(runs), 30 * 1024);
    expect(warm?.met).toBe(true);
    expect(cold?.met).toBe(false);
    expect(perRequest?.met).toBe(true);
    expect(bundle?.met).toBe(false);
  });
});

describe('worker start-up trace', () => {
  it("reads the worker script's evaluation on the ServiceWorker thread and the wait before its first request", () => {
    const events = [
      { name: 'thread_name', ph: 'M', pid: 1, tid: 2, ts: 0, args: { name: 'ServiceWorker thread' } },
      { name: 'thread_name', ph: 'M', pid: 1, tid: 3, ts: 0, args: { name: 'CrRendererMain' } },
      { name: 'EvaluateScript', ph: 'X', pid: 1, tid: 2, ts: 1_000, dur: 9_500, args: { data: { url: 'http://a.localhost:1/webpp-sw.js' } } },
      { name: 'v8.compile', ph: 'X', pid: 1, tid: 2, ts: 1_100, dur: 2_000, args: { data: { url: 'http://a.localhost:1/webpp-sw.js' } } },
      // Another thread's script of the same name does not count.
      { name: 'EvaluateScript', ph: 'X', pid: 1, tid: 3, ts: 1_000, dur: 50_000, args: { data: { url: 'http://a.localhost:1/webpp-sw.js' } } },
      { name: 'ServiceWorkerGlobalScope::DispatchFetchEventInternal', ph: 'X', pid: 1, tid: 2, ts: 20_000, dur: 100 },
      { name: 'ResourceSendRequest', ph: 'I', pid: 1, tid: 2, ts: 33_500, args: { data: { url: 'http://a.localhost:1/' } } },
    ];
    expect(workerScriptTimes(events, '/webpp-sw.js')).toEqual({ evaluateMs: 9.5, compileMs: 2, firstRequestAfterDispatchMs: 13.5 });
  });
});
