/**
 * Prometheus text exposition format (version 0.0.4) for the load statistics and the
 * origin's own counters.
 */
import type { LoadSnapshot } from './load-stats.js';
import { clusterCacheMetrics, type ClusterCacheSnapshot } from '../cache/cluster/cluster-metrics.js';
import type { MemoryCacheSummary } from '../cache/cache-api.js';
import { writeMemoryCacheMetrics } from '../cache/cache-metrics.js';
import { pushPrometheusLines, type PushGauges } from '../push/push-state.js';
import { writeReplicationMetrics, type ReplicationGauges } from './replication-metrics.js';
import { writeLazyReplicationMetrics } from './lazy-replication-metrics.js';
import type { LazyReplicationStats } from '../lazy/lazy-replicas.js';
import { writeClientAggregateMetrics, type ClientAggregateGauges } from '../client-aggregate/client-aggregates.js';

export interface OriginGauges {
  directoryVersion: number;
  directoryPairs: number;
  storedReplicas: number;
  preprocessCacheHits: number;
  preprocessCacheMisses: number;
  preprocessCacheBytes: number;
  /** The memory cache (issue 15): its counters, bytes and bound. */
  memoryCache: MemoryCacheSummary;
  peers: { peer: string; pushesSent: number; pushesFailed: number; syncRounds: number; lastSuccessAtMs: number }[];
  /** The cooperative memory cache (cache/cluster/): this server's and the cluster's counters; absent when off. */
  cacheCluster?: ClusterCacheSnapshot;
  /** Server push (issue 13): push/push-state.ts. */
  push?: PushGauges;
  /** Load-driven replication (issue 14); absent without peers. */
  replication?: ReplicationGauges;
  /** Lazy fetch of automatic replicas placed here (issue 14). */
  lazyReplication?: LazyReplicationStats;
  /** The client aggregate for first visits (issue 13 §6, client-aggregate/); absent when off. */
  clientAggregate?: ClientAggregateGauges;
}

export const PROMETHEUS_CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';

export function toPrometheus(load: LoadSnapshot, gauges: OriginGauges): string {
  const lines: string[] = [];
  const metric = (name: string, type: 'counter' | 'gauge', help: string, samples: [Record<string, string>, number][]): void => {
    lines.push(`# HELP ${name} ${help}`, `# TYPE ${name} ${type}`);
    for (const [labels, value] of samples) lines.push(`${name}${formatLabels(labels)} ${formatNumber(value)}`);
  };
  const perResource = (pick: (resource: LoadSnapshot['total']) => number): [Record<string, string>, number][] => [
    [{}, pick(load.total)],
    ...load.resources.map((resource): [Record<string, string>, number] => [{ resource: resource.resource }, pick(resource)]),
  ];
  metric('webpp_requests_total', 'counter', 'Requests served (no label: all resources).', perResource((r) => r.requests));
  metric('webpp_response_bytes_total', 'counter', 'Response body bytes sent.', perResource((r) => r.bytes));
  metric('webpp_request_rate_per_second', 'gauge', 'Exponentially decayed request rate.', perResource((r) => r.requestsPerSecond));
  metric('webpp_byte_rate_per_second', 'gauge', 'Exponentially decayed byte rate.', perResource((r) => r.bytesPerSecond));
  metric('webpp_service_time_ewma_ms', 'gauge', "EWMA of this server's own service time.", perResource((r) => r.serviceTimeEwmaMs));
  metric('webpp_directory_version', 'gauge', 'Replication directory version (sum of Yjs state-vector clocks).', [[{}, gauges.directoryVersion]]);
  metric('webpp_directory_pairs', 'gauge', '(logical, physical) pairs in the replication directory.', [[{}, gauges.directoryPairs]]);
  metric('webpp_stored_replicas', 'gauge', 'Replicas stored on this server by replica management.', [[{}, gauges.storedReplicas]]);
  metric('webpp_preprocess_cache_hits_total', 'counter', 'Pre-processing cache hits.', [[{}, gauges.preprocessCacheHits]]);
  metric('webpp_preprocess_cache_misses_total', 'counter', 'Pre-processing cache misses.', [[{}, gauges.preprocessCacheMisses]]);
  metric('webpp_preprocess_cache_bytes', 'gauge', 'Bytes held by the pre-processing cache.', [[{}, gauges.preprocessCacheBytes]]);
  metric('webpp_peer_pushes_total', 'counter', 'Directory pushes to a peer, by result.', gauges.peers.flatMap((peer) => [
    [{ peer: peer.peer, result: 'ok' }, peer.pushesSent] as [Record<string, string>, number],
    [{ peer: peer.peer, result: 'failed' }, peer.pushesFailed] as [Record<string, string>, number],
  ]));
  metric('webpp_peer_sync_rounds_total', 'counter', 'Successful anti-entropy rounds with a peer.', gauges.peers.map((peer) => [{ peer: peer.peer }, peer.syncRounds]));
  writeMemoryCacheMetrics(gauges.memoryCache, metric);
  if (gauges.push !== undefined) lines.push(...pushPrometheusLines(gauges.push));
  writeReplicationMetrics(metric, gauges.replication);
  writeLazyReplicationMetrics(metric, gauges.lazyReplication);
  writeClientAggregateMetrics(metric, gauges.clientAggregate);
  const cacheCluster = gauges.cacheCluster === undefined ? '' : clusterCacheMetrics(gauges.cacheCluster);
  return `${lines.join('\n')}\n${cacheCluster}`;
}

function formatLabels(labels: Record<string, string>): string {
  const entries = Object.entries(labels);
  if (entries.length === 0) return '';
  return `{${entries.map(([key, value]) => `${key}="${value.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n')}"`).join(',')}}`;
}

function formatNumber(value: number): string {
  if (Number.isNaN(value)) return 'NaN';
  if (!Number.isFinite(value)) return value > 0 ? '+Inf' : '-Inf';
  return String(value);
}
