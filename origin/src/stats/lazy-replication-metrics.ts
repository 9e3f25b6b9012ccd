/** The lazy-replication block of /metrics (issue 14; lazy/lazy-replicas.ts). */
import type { LazyReplicationStats } from '../lazy/lazy-replicas.js';

type MetricWriter = (name: string, type: 'counter' | 'gauge', help: string, samples: [Record<string, string>, number][]) => void;

export function writeLazyReplicationMetrics(metric: MetricWriter, stats: LazyReplicationStats | undefined): void {
  if (stats === undefined) return;
  metric('webpp_lazy_fetches_total', 'counter', 'Lazy fetches of automatic replicas placed here, by result.', [
    [{ result: 'started' }, stats.fetches],
    [{ result: 'failed' }, stats.fetchFailures],
    [{ result: 'resumed' }, stats.resumedFetches],
  ]);
  metric('webpp_lazy_shared_requests_total', 'counter', 'Requests answered from a lazy fetch another request had started.', [[{}, stats.sharedRequests]]);
  metric('webpp_lazy_revalidations_total', 'counter', 'T_validate revalidations of automatic copies, by result.', [
    [{ result: 'checked' }, stats.revalidations],
    [{ result: 'updated' }, stats.revalidationUpdates],
  ]);
  metric('webpp_lazy_dropped_copies_total', 'counter', 'Copies dropped because their automatic replica was withdrawn or recalled.', [[{}, stats.droppedCopies]]);
  metric('webpp_lazy_fetches_in_flight', 'gauge', 'Lazy fetches running now.', [[{}, stats.inFlight]]);
}
