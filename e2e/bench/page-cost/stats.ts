/**
 * From the samples of runs (run.ts) to the rows, the per-request row, the summary and the
 * goals of docs/benchmarks/page-cost.json (issue 26 §1). Every figure is a median: over a
 * run's loads first, then over the runs, with the runs' range beside it.
 */
import { CONFIGURATIONS, type Configuration } from './measure.js';
import type { RequestPath, RunResult } from './run.js';

export function median(values: readonly number[]): number {
  const sorted = values.filter((value) => Number.isFinite(value)).sort((a, b) => a - b);
  if (sorted.length === 0) return Number.NaN;
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? (sorted[middle] as number) : ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2;
}

const round = (value: number, digits = 1): number => (Number.isFinite(value) ? Math.round(value * 10 ** digits) / 10 ** digits : Number.NaN);
const range = (values: readonly number[], digits = 1): [number, number] => {
  const finite = values.filter((value) => Number.isFinite(value));
  return finite.length === 0 ? [Number.NaN, Number.NaN] : [round(Math.min(...finite), digits), round(Math.max(...finite), digits)];
};

export interface PageRow {
  page: string;
  configuration: Configuration;
  load_ms: number;
  lcp_ms: number;
  last_resource_ms: number;
  ratio_to_no_worker: number;
  ratio_to_bare_worker: number;
  /** fetchStart − workerStart of the navigation (the worker's start-up when it was stopped). */
  worker_start_ms: number;
  /** responseStart − fetchStart of the navigation: with a worker, from its fetch event to its answer's head (webpp: the state's restore, the plan, a preload). */
  navigation_response_ms: number;
  loads: number;
  /** Range of the per-run medians (with several runs). */
  load_ms_range: [number, number];
  ratio_to_no_worker_range: [number, number];
  ratio_to_bare_worker_range: [number, number];
}

interface RunRow {
  page: string;
  configuration: Configuration;
  loadMs: number;
  lcpMs: number;
  lastResourceMs: number;
  workerStartMs: number;
  navigationResponseMs: number;
  ratioToNoWorker: number;
  ratioToBareWorker: number;
  loads: number;
}

function runRows(run: RunResult): RunRow[] {
  const pages = [...new Set(run.loads.map((load) => load.page))];
  const rows: RunRow[] = [];
  for (const page of pages) {
    const of = (configuration: Configuration) => run.loads.filter((load) => load.page === page && load.configuration === configuration);
    const loadMedian = (configuration: Configuration): number => median(of(configuration).map((load) => load.loadMs));
    for (const configuration of CONFIGURATIONS) {
      const samples = of(configuration);
      const loadMs = loadMedian(configuration);
      rows.push({
        page,
        configuration,
        loadMs,
        lcpMs: median(samples.map((load) => load.lcpMs)),
        lastResourceMs: median(samples.map((load) => load.lastResourceMs)),
        workerStartMs: median(samples.map((load) => load.workerStartMs)),
        navigationResponseMs: median(samples.map((load) => load.navigationResponseMs)),
        ratioToNoWorker: loadMs / loadMedian('no-worker'),
        ratioToBareWorker: loadMs / loadMedian('bare-worker'),
        loads: samples.length,
      });
    }
  }
  return rows;
}

export function pageRows(runs: readonly RunResult[]): PageRow[] {
  const perRun = runs.map(runRows);
  const first = perRun[0] ?? [];
  return first.map(({ page, configuration }) => {
    const same = perRun.map((rows) => rows.find((row) => row.page === page && row.configuration === configuration) as RunRow);
    const field = (pick: (row: RunRow) => number): number[] => same.map(pick);
    return {
      page,
      configuration,
      load_ms: round(median(field((row) => row.loadMs))),
      lcp_ms: round(median(field((row) => row.lcpMs))),
      last_resource_ms: round(median(field((row) => row.lastResourceMs))),
      ratio_to_no_worker: round(median(field((row) => row.ratioToNoWorker)), 3),
      ratio_to_bare_worker: round(median(field((row) => row.ratioToBareWorker)), 3),
      worker_start_ms: round(median(field((row) => row.workerStartMs))),
      navigation_response_ms: round(median(field((row) => row.navigationResponseMs))),
      loads: same.reduce((total, row) => total + row.loads, 0),
      load_ms_range: range(field((row) => row.loadMs)),
      ratio_to_no_worker_range: range(field((row) => row.ratioToNoWorker), 3),
      ratio_to_bare_worker_range: range(field((row) => row.ratioToBareWorker), 3),
    };
  });
}

export interface RequestRow {
  bytes: number;
  /** Median duration to the last body byte, per path (ms). */
  direct_ms: number;
  bare_worker_ms: number;
  webpp_ms: number;
  /** From a page whose requests the worker keeps (run.ts RequestPath). */
  webpp_answered_ms: number;
  webpp_minus_direct_ms: number;
  webpp_answered_minus_direct_ms: number;
  bare_worker_minus_direct_ms: number;
  webpp_minus_direct_ms_range: [number, number];
  requests_per_path: number;
}

export function requestRows(runs: readonly RunResult[]): RequestRow[] {
  const sizes = [...new Set(runs.flatMap((run) => run.requests.map((request) => request.bytes)))].sort((a, b) => a - b);
  return sizes.map((bytes) => {
    const perRun = runs.map((run) => {
      const of = (path: RequestPath): number => median(run.requests.find((request) => request.bytes === bytes && request.path === path)?.durationsMs ?? []);
      return { direct: of('direct'), bare: of('bare-worker'), webpp: of('webpp'), answered: of('webpp-answered') };
    });
    const count = runs.reduce((total, run) => total + (run.requests.find((request) => request.bytes === bytes && request.path === 'direct')?.durationsMs.length ?? 0), 0);
    const direct = median(perRun.map((run) => run.direct));
    const bare = median(perRun.map((run) => run.bare));
    const webpp = median(perRun.map((run) => run.webpp));
    const answered = median(perRun.map((run) => run.answered));
    return {
      bytes,
      direct_ms: round(direct, 2),
      bare_worker_ms: round(bare, 2),
      webpp_ms: round(webpp, 2),
      webpp_answered_ms: round(answered, 2),
      webpp_minus_direct_ms: round(median(perRun.map((run) => run.webpp - run.direct)), 2),
      webpp_answered_minus_direct_ms: round(median(perRun.map((run) => run.answered - run.direct)), 2),
      bare_worker_minus_direct_ms: round(median(perRun.map((run) => run.bare - run.direct)), 2),
      webpp_minus_direct_ms_range: range(perRun.map((run) => run.webpp - run.direct), 2),
      requests_per_path: count,
    };
  });
}

export interface Summary {
  /** Median over pages of ratio_to_no_worker of webpp-warm (and its worst page). */
  warm_to_no_worker_median: number;
  warm_to_no_worker_worst: number;
  warm_to_no_worker_worst_page: string;
  cold_to_bare_worker_median: number;
  bare_worker_to_no_worker_median: number;
  cold_to_no_worker_median: number;
}

export function summary(rows: readonly PageRow[]): Summary {
  const ratios = (configuration: Configuration, pick: (row: PageRow) => number): number[] => rows.filter((row) => row.configuration === configuration).map(pick);
  const warm = rows.filter((row) => row.configuration === 'webpp-warm');
  const worst = warm.reduce<PageRow | undefined>((found, row) => (found === undefined || row.ratio_to_no_worker > found.ratio_to_no_worker ? row : found), undefined);
  return {
    warm_to_no_worker_median: round(median(ratios('webpp-warm', (row) => row.ratio_to_no_worker)), 3),
    warm_to_no_worker_worst: worst?.ratio_to_no_worker ?? Number.NaN,
    warm_to_no_worker_worst_page: worst?.page ?? '',
    cold_to_bare_worker_median: round(median(ratios('webpp-cold', (row) => row.ratio_to_bare_worker)), 3),
    bare_worker_to_no_worker_median: round(median(ratios('bare-worker', (row) => row.ratio_to_no_worker)), 3),
    cold_to_no_worker_median: round(median(ratios('webpp-cold', (row) => row.ratio_to_no_worker)), 3),
  };
}

/** "+2.7 ms", "−0.4 ms". */
export const signedMs = (ms: number): string => `${ms < 0 ? '−' : '+'}${Math.abs(ms)} ms`;

export interface Goal {
  goal: string;
  target: string;
  value: string;
  met: boolean;
}

/** The goals of issue 26 §1, each met or missed on these figures. */
export function goals(sum: Summary, requests: readonly RequestRow[], bundleGzipBytes: number): Goal[] {
  const worstRequest = Math.max(...requests.map((row) => row.webpp_minus_direct_ms));
  return [
    {
      goal: 'warm worker ÷ no worker, page load',
      target: 'median ≤ 1.05, worst page ≤ 1.15',
      value: `median ${sum.warm_to_no_worker_median}, worst ${sum.warm_to_no_worker_worst} (${sum.warm_to_no_worker_worst_page})`,
      met: sum.warm_to_no_worker_median <= 1.05 && sum.warm_to_no_worker_worst <= 1.15,
    },
    {
      goal: 'cold worker ÷ bare pass-through worker, page load',
      target: 'median ≤ 1.10',
      value: `median ${sum.cold_to_bare_worker_median}`,
      met: sum.cold_to_bare_worker_median <= 1.1,
    },
    {
      goal: 'per request, through webpp − direct, same replica',
      target: '≤ +1 ms',
      // From a page of the site (the worker may leave the request to the browser); beside it, when the worker takes the request.
      value: requests.map((row) => `${row.bytes / 1024} KB: ${signedMs(row.webpp_minus_direct_ms)} (the worker answering: ${signedMs(row.webpp_answered_minus_direct_ms)})`).join(', '),
      met: worstRequest <= 1,
    },
    {
      goal: 'default webpp-sw.js, gzip',
      target: '≤ 25 KB',
      value: `${round(bundleGzipBytes / 1024)} KB`,
      met: bundleGzipBytes <= 25 * 1024,
    },
  ];
}
