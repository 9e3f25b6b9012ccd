/**
 * What the latency table can show for the policy the worker runs. The paper's policies
 * (`refresh`, `paper`, `fast`) keep the latency table of eqs. 1–3: mean, standard deviation,
 * S-percentile and T-percentile timeout per server. The default `webpp` policy keeps its
 * own estimates (docs/selection.md, "The webpp policy") and reports only a time-to-first-byte
 * estimate per server: its rows carry 0 for the standard deviation and the timeout, which
 * the table must not show as measured values.
 */
import type { WorkerStateSnapshot } from '@webpp/sw';

export interface LatencyColumns {
  /** True when the rows come from the paper's latency table (every column is measured). */
  paperTable: boolean;
  /** Heading of the selection column. */
  estimateHeading: string;
  /** The note above the table. */
  note: string;
}

export function latencyColumns(snapshot: Pick<WorkerStateSnapshot, 'policy' | 'config' | 'servers' | 'table'>): LatencyColumns {
  const { config, policy } = snapshot;
  // The worker's views come from the paper's table when the policy keeps one (sw/src/policy-views.ts).
  const paperTable = snapshot.servers.every((row) => Object.hasOwn(snapshot.table.servers, row.server));
  if (paperTable) {
    return {
      paperTable,
      estimateHeading: `S-percentile (S=${config.selectPercentile})`,
      note: `Time to first byte per server (paper eq. 1–3): r = ${config.ewmaWeight}, TTL = ${Math.round(config.ttlMs / 1000)} s, F = ${Math.round(config.probeIntervalMs / 1000)} s, timeout = ${config.timeoutPercentile}th percentile.`,
    };
  }
  return {
    paperTable,
    estimateHeading: 'TTFB estimate',
    note: `Time to first byte per server, as the ${policy} policy estimates it (docs/selection.md); it keeps no standard deviation or fixed timeout per server.`,
  };
}
