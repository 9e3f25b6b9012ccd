/**
 * The cooperative cache's block of `/metrics` (Prometheus text format 0.0.4): this server's
 * counters, and the cluster's totals as of the peers' last reports, labelled by server.
 */
import type { CooperativeCache } from './cooperative-cache.js';

export type ClusterCacheSnapshot = ReturnType<CooperativeCache['snapshot']>;

/** Counter name in the snapshot → metric name and help. */
const METRICS: [string, string, string][] = [
  ['peerHits', 'webpp_cache_peer_hits_total', 'Local misses served from a peer’s memory (member miss, array hit).'],
  ['peerHitBytes', 'webpp_cache_peer_hit_bytes_total', 'Body bytes obtained from peers’ memory.'],
  ['arrayMisses', 'webpp_cache_array_misses_total', 'Local misses no peer could serve: disk or upstream (array miss).'],
  ['lookupsSent', 'webpp_cache_peer_lookups_total', 'Lookups sent to peers.'],
  ['lookupsServed', 'webpp_cache_peer_lookups_served_total', 'Lookups answered for peers.'],
  ['lookupHitsServed', 'webpp_cache_peer_lookup_hits_served_total', 'Lookups answered for peers from memory.'],
  ['fillsSent', 'webpp_cache_fills_sent_total', 'Copies sent to their home after an array miss.'],
  ['fillsKept', 'webpp_cache_fills_kept_total', 'Copies received as home and kept.'],
  ['secondChancesSent', 'webpp_cache_second_chances_total', 'Evicted singlets forwarded to a random peer.'],
  ['secondChancesKept', 'webpp_cache_second_chances_kept_total', 'Second-chance copies received and kept.'],
  ['pushesRefusedStale', 'webpp_cache_pushes_refused_stale_total', 'Pushed copies refused: read before an invalidation, or expired.'],
  ['invalidationsSent', 'webpp_cache_cluster_invalidations_total', 'Invalidations sent to the cluster.'],
  ['peerErrors', 'webpp_cache_peer_errors_total', 'Cache calls to peers that failed at the network level.'],
];

export function clusterCacheMetrics(snapshot: ClusterCacheSnapshot): string {
  const lines: string[] = [];
  for (const [key, name, help] of METRICS) {
    lines.push(`# HELP ${name} ${help}`, `# TYPE ${name} counter`);
    for (const [server, entry] of Object.entries(snapshot.servers)) {
      const value = entry.counters[key];
      if (typeof value === 'number') lines.push(`${name}{server="${server.replace(/["\\\n]/g, '_')}"} ${value}`);
    }
  }
  lines.push('# HELP webpp_cache_live_peers Peers the cooperative cache currently counts as live.', '# TYPE webpp_cache_live_peers gauge', `webpp_cache_live_peers ${snapshot.livePeers.length}`);
  return `${lines.join('\n')}\n`;
}
