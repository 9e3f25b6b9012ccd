/**
 * The chaos bench's figures: failed loads and resources, load-time percentiles of the
 * faulty loop against the fault-free loop of the same run, the worker's failovers, and the
 * schedule's summary. Written to docs/benchmarks/chaos.json and printed.
 */
import type { FaultCounts, FaultLogEntry } from './fault-runner.js';
import type { LoopResult } from './load-loop.js';
import type { UnexpectedExit } from '../../support/cluster/origin-process.js';

/** Nearest-rank percentile of a sorted list. */
export function percentile(sorted: readonly number[], p: number): number | null {
  if (sorted.length === 0) return null;
  const rank = Math.min(sorted.length, Math.max(1, Math.ceil((p / 100) * sorted.length)));
  return sorted[rank - 1]!;
}

interface LoopFigures {
  page_loads: number;
  failed_page_loads: number;
  failed_resources: number;
  network_error_resources: number;
  failed_navigations: number;
  p50_ms: number | null;
  p95_ms: number | null;
  p99_ms: number | null;
  max_ms: number | null;
  failovers: number;
  duration_ms: number;
  timed_out: boolean;
}

/** The load times of a loop's loads that reached `load`, sorted. */
export function loadTimes(loop: LoopResult): number[] {
  return loop.loads.flatMap((load) => (load.loadMs === undefined ? [] : [load.loadMs])).sort((x, y) => x - y);
}

function loopFigures(loop: LoopResult): LoopFigures {
  const times = loadTimes(loop);
  return {
    page_loads: loop.loads.length,
    failed_page_loads: loop.loads.filter((load) => !load.ok).length,
    failed_resources: loop.loads.reduce((sum, load) => sum + load.failedResources.length, 0),
    network_error_resources: loop.loads.reduce((sum, load) => sum + load.networkErrors.length, 0),
    failed_navigations: loop.loads.filter((load) => load.navigationError !== undefined).length,
    p50_ms: percentile(times, 50),
    p95_ms: percentile(times, 95),
    p99_ms: percentile(times, 99),
    max_ms: times.length > 0 ? times[times.length - 1]! : null,
    failovers: loop.counters.get('failovers'),
    duration_ms: loop.durationMs,
    timed_out: loop.timedOut,
  };
}

export interface ChaosReportInput {
  seed: string;
  preset: string;
  command: string;
  faulty: LoopResult;
  baseline: LoopResult;
  faultCounts: FaultCounts;
  faultLog: FaultLogEntry[];
  unexpectedExits: UnexpectedExit[];
  originStarts: Record<string, number>;
  durationMs: number;
  timeLimitMs: number;
  loadBoundMs: number;
  siteBytes: number;
}

function ratio(value: number | null, base: number | null): number | null {
  return value === null || base === null || base === 0 ? null : Math.round((value / base) * 100) / 100;
}

function compactLoads(loop: LoopResult): unknown[] {
  const phaseStartMs = loop.loads[0]?.startedAtMs ?? 0;
  return loop.loads.map((load) => [load.startedAtMs - phaseStartMs, load.path, load.loadMs ?? null, load.ok, load.slowest?.path ?? null, load.slowest?.durationMs ?? null]);
}

function networkErrorLoads(loop: LoopResult): unknown[] {
  return loop.loads.flatMap((load, index) => (load.networkErrors.length === 0 ? [] : [[index, load.path, load.networkErrors.map((url) => new URL(url).pathname)]]));
}

export function chaosReport(input: ChaosReportInput): Record<string, unknown> {
  const faulty = loopFigures(input.faulty);
  const base = loopFigures(input.baseline);
  return {
    benchmark: 'chaos',
    date: new Date().toISOString(),
    command: input.command,
    seed: input.seed,
    worker_preset: input.preset,
    page_loads: faulty.page_loads,
    failed_page_loads: faulty.failed_page_loads,
    /** Resources of the visitor's checks that failed (image not decoded, style not applied, script not run, 1 MiB file wrong) or answered ≥ 400; a network error (status 0) alone is not one. */
    failed_resources: faulty.failed_resources,
    /** The page's own resources that failed with a network error (Resource Timing status 0) and were not loaded again (network-errors.ts); may overlap failed_resources. */
    network_error_resources: faulty.network_error_resources,
    failed_navigations: faulty.failed_navigations,
    p50_ms: faulty.p50_ms,
    p95_ms: faulty.p95_ms,
    p99_ms: faulty.p99_ms,
    max_ms: faulty.max_ms,
    page_loads_no_faults: base.page_loads,
    failed_page_loads_no_faults: base.failed_page_loads,
    failed_resources_no_faults: base.failed_resources,
    network_error_resources_no_faults: base.network_error_resources,
    p50_ms_no_faults: base.p50_ms,
    p95_ms_no_faults: base.p95_ms,
    p99_ms_no_faults: base.p99_ms,
    max_ms_no_faults: base.max_ms,
    ratio_p50: ratio(faulty.p50_ms, base.p50_ms),
    ratio_p95: ratio(faulty.p95_ms, base.p95_ms),
    ratio_p99: ratio(faulty.p99_ms, base.p99_ms),
    failovers: faulty.failovers,
    failovers_no_faults: base.failovers,
    failover_causes: {
      faults: { by_outcome: input.faulty.events.failoversByOutcome, from: input.faulty.events.failoversFrom, body_resumes: input.faulty.events.bodyResumes },
      no_faults: { by_outcome: input.baseline.events.failoversByOutcome, from: input.baseline.events.failoversFrom, body_resumes: input.baseline.events.bodyResumes },
    },
    worker_counters: { faults: input.faulty.counters.totals, no_faults: input.baseline.counters.totals },
    worker_restarts: input.faulty.counters.workerRestarts + input.baseline.counters.workerRestarts,
    served_by: { faults: input.faulty.servedBy, no_faults: input.baseline.servedBy },
    faults: {
      kills: input.faultCounts.kills,
      partitions: input.faultCounts.partitions,
      partition_modes: input.faultCounts.partitionModes,
      slowdowns: input.faultCounts.slowdowns,
      max_concurrent_faulty: input.faultCounts.maxConcurrentFaulty,
      stacked_on_slowdown: input.faultCounts.stackedOnSlowdown,
      origin_starts: input.originStarts,
      unexpected_origin_exits: input.unexpectedExits,
    },
    duration_ms: input.durationMs,
    phase_ms: { faults: faulty.duration_ms, no_faults: base.duration_ms },
    time_limit_ms: input.timeLimitMs,
    time_limit_hit: faulty.timed_out || base.timed_out,
    load_bound_ms: input.loadBoundMs,
    site_bytes: input.siteBytes,
    /** Every load: [ms since its phase began, path, load ms (null: no load event), ok, slowest resource, its ms]. */
    loads: {
      faults: compactLoads(input.faulty),
      no_faults: compactLoads(input.baseline),
    },
    /** Loads with network_error_resources: [index, path, the resources' paths]. */
    network_errors: networkErrorLoads(input.faulty),
    network_errors_no_faults: networkErrorLoads(input.baseline),
    failures: input.faulty.failures,
    failures_no_faults: input.baseline.failures,
    /** Loads under faults slower than 3 × the fault-free p99 (issue 22's goal line), with the worker's account (load-loop.ts, SlowLoadDetail). */
    slow_loads: input.faulty.slowLoads,
    fault_log: input.faultLog,
  };
}

export function printReport(report: Record<string, unknown>): void {
  const row = (label: string, faults: unknown, none: unknown): string => `  ${label.padEnd(22)} ${String(faults).padStart(10)} ${String(none).padStart(12)}`;
  const faults = report.faults as Record<string, unknown>;
  console.log('\nchaos run:', `seed ${String(report.seed)}, worker preset ${String(report.worker_preset)}, ${((report.duration_ms as number) / 1000).toFixed(0)} s`);
  console.log(`  ${''.padEnd(22)} ${'faults'.padStart(10)} ${'no faults'.padStart(12)}`);
  console.log(row('page loads', report.page_loads, report.page_loads_no_faults));
  console.log(row('failed page loads', report.failed_page_loads, report.failed_page_loads_no_faults));
  console.log(row('failed resources', report.failed_resources, report.failed_resources_no_faults));
  console.log(row('network errors', report.network_error_resources, report.network_error_resources_no_faults));
  console.log(row('p50 ms', report.p50_ms, report.p50_ms_no_faults));
  console.log(row('p95 ms', report.p95_ms, report.p95_ms_no_faults));
  console.log(row('p99 ms', report.p99_ms, report.p99_ms_no_faults));
  console.log(row('worker failovers', report.failovers, report.failovers_no_faults));
  const causes = report.failover_causes as Record<string, { by_outcome: unknown; body_resumes: unknown }>;
  console.log(`  failovers by cause: faults ${JSON.stringify(causes.faults!.by_outcome)}, no faults ${JSON.stringify(causes.no_faults!.by_outcome)}`);
  console.log(`  body resumes: faults ${JSON.stringify(causes.faults!.body_resumes)}, no faults ${JSON.stringify(causes.no_faults!.body_resumes)}`);
  console.log(`  ratios faults / no faults: p50 ×${String(report.ratio_p50)}, p95 ×${String(report.ratio_p95)}, p99 ×${String(report.ratio_p99)}`);
  console.log(
    `  faults: ${String(faults.kills)} kills, ${String(faults.partitions)} partitions ${JSON.stringify(faults.partition_modes)}, ${String(faults.slowdowns)} slowdowns (${String(faults.stacked_on_slowdown)} kills/partitions on a slowed link); ` +
      `at most ${String(faults.max_concurrent_faulty)} replicas faulty at once; ${(faults.unexpected_origin_exits as unknown[]).length} unexpected origin exits`,
  );
}
