/**
 * What every policy built on the paper's latency table shares (Web++ paper, Section 4.1):
 * samples fold into eq. (2) and (3), failures mark the server failed (Figure 4), the table
 * is the persisted state, and its rows are the dashboard's view. The evaluation baselines
 * keep one too, only to show what they saw; they do not plan by it.
 */
import { PAPER_DEFAULTS, FAST_PRESET, resolveSelectionConfig } from '../config.js';
import { LatencyTable } from '../latency-table.js';
import type { Clock, SelectionConfig } from '../types.js';
import type { ClientPolicy, ExchangeSample, PolicyServerView } from '../engine/policy-types.js';

/** A policy that keeps the paper's latency table (the worker's dashboard shows its rows in full). */
export interface TablePolicy extends ClientPolicy {
  readonly table: LatencyTable;
}

export type TablePolicyParts = Pick<ClientPolicy, 'observe' | 'onServerFailed' | 'snapshot' | 'restore' | 'describe'>;

/** Options every table policy takes: `preset` chooses the base, `selection` overrides it. */
export interface SelectionOptions {
  preset?: 'paper' | 'fast';
  selection?: Partial<SelectionConfig>;
}

/** The selection parameters from a factory's options, over `base` (default: the named preset, else the paper's). */
export function selectionFrom(options: Record<string, unknown> | undefined, base?: Readonly<SelectionConfig>): Required<SelectionConfig> {
  const { preset, selection } = (options ?? {}) as SelectionOptions;
  const presetBase = preset === 'fast' ? FAST_PRESET : PAPER_DEFAULTS;
  return resolveSelectionConfig(selection ?? {}, base ?? presetBase);
}

const FAILURES = new Set<ExchangeSample['outcome']>(['timeout', 'network-error', 'server-error', 'cut-mid-body']);

/**
 * observe(): a response head (also a 404/410: the server is up) is a time-to-first-byte
 * sample, eq. (2), (3); a timeout, network error, 5xx or broken body marks the server failed
 * (Figure 4). A failed probe changes nothing: the probe already pushed the next one back.
 */
export function tablePolicyParts(table: LatencyTable): TablePolicyParts {
  return {
    observe(sample) {
      if (sample.outcome === 'served' || sample.outcome === 'stale') {
        if (sample.ttfbMs !== undefined && Number.isFinite(sample.ttfbMs) && sample.ttfbMs >= 0) table.recordSample(sample.server, sample.ttfbMs);
      } else if (FAILURES.has(sample.outcome) && sample.purpose !== 'probe') {
        table.markFailed(sample.server);
      }
    },
    onServerFailed: (listener) => table.onServerFailed(listener),
    snapshot: () => table.toJSON(),
    // Restoring merges row by row (newer updatedAtMs wins), so it also folds in another tab's writes.
    restore: (state) => table.mergeFrom(state),
    describe: (nowMs) => table.servers().map((server) => describeRow(table, server, nowMs)),
  };
}

function describeRow(table: LatencyTable, server: string, _nowMs: number): PolicyServerView {
  const row = table.get(server)!;
  return {
    server,
    state: row.state,
    ...(row.sampleCount > 0 ? { ttfbEstimateMs: row.meanMs } : {}),
    sampleCount: row.sampleCount,
    lastSampleAtMs: row.lastSampleAtMs,
    ...(row.state === 'failed' ? { nextProbeAtMs: row.nextProbeAtMs } : {}),
  };
}

/** A new table on the engine's clock. */
export function newTable(config: SelectionConfig, now: Clock): LatencyTable {
  return new LatencyTable(config, now);
}
