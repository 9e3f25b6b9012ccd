/** The memory cache's figures in /metrics (Prometheus text format), beside the origin's own. */
import type { MemoryCacheSummary } from './cache-api.js';

type Samples = [Record<string, string>, number][];
export type MetricWriter = (name: string, type: 'counter' | 'gauge', help: string, samples: Samples) => void;

export function writeMemoryCacheMetrics(summary: MemoryCacheSummary, metric: MetricWriter): void {
  if (!summary.enabled) return;
  metric('webpp_memory_cache_hits_total', 'counter', 'Requests answered from memory: local (this server) or peer (member miss, array hit).', [
    [{ kind: 'local' }, summary.localHits],
    [{ kind: 'peer' }, summary.peerHits],
  ]);
  metric('webpp_memory_cache_misses_total', 'counter', 'Cacheable requests that went to the disk, the app or the upstream (array miss).', [[{}, summary.misses]]);
  metric('webpp_memory_cache_served_bytes_total', 'counter', 'Body bytes answered from memory.', [[{}, summary.bytesServed]]);
  metric('webpp_memory_cache_removals_total', 'counter', 'Entries removed, by reason.', [
    [{ reason: 'evicted' }, summary.evictions],
    [{ reason: 'invalidated' }, summary.invalidations],
    [{ reason: 'expired' }, summary.expirations],
  ]);
  metric('webpp_memory_cache_coalesced_total', 'counter', 'Misses that waited for a concurrent miss of the same key (single flight).', [[{}, summary.coalesced]]);
  metric('webpp_memory_cache_revalidations_total', 'counter', 'Expired proxy entries confirmed by the upstream with a 304.', [[{}, summary.revalidations]]);
  metric('webpp_memory_cache_stores_total', 'counter', 'Entries stored.', [[{}, summary.stores]]);
  metric('webpp_memory_cache_rejections_total', 'counter', 'Responses not admitted (too large, or colder than what they would displace).', [[{}, summary.rejections]]);
  metric('webpp_memory_cache_bytes', 'gauge', 'Bytes held by the memory cache (its bound: webpp_memory_cache_max_bytes).', [[{}, summary.sizeBytes]]);
  metric('webpp_memory_cache_max_bytes', 'gauge', 'Byte bound of the memory cache.', [[{}, summary.maxBytes]]);
  metric('webpp_memory_cache_entries', 'gauge', 'Entries held by the memory cache.', [[{}, summary.entries]]);
}
