/**
 * The load-driven replication block of the statistics (issue 14): peer liveness and load
 * as this server sees them (in any cluster), and the automatic decisions (with the replication
 * feature). In the stats JSON it is `origin.replication`; in /metrics the `webpp_peer_*` and
 * `webpp_replication_*` families.
 */
import type { ReplicationStats } from '../replication/controller.js';
import type { PeerLiveness } from '../sync/peer-state.js';

export interface ReplicationGauges {
  peers: PeerLiveness[];
  /** The decider's, when the replication feature is registered (features/replication.ts). */
  decisions: ReplicationStats | undefined;
}

type Sample = [Record<string, string>, number];
export type MetricWriter = (name: string, type: 'counter' | 'gauge', help: string, samples: Sample[]) => void;

export function writeReplicationMetrics(metric: MetricWriter, gauges: ReplicationGauges | undefined): void {
  if (gauges === undefined) return;
  const { peers, decisions } = gauges;
  metric('webpp_peer_up', 'gauge', 'Whether a peer answers (0 after it missed enough pings).', peers.map((peer): Sample => [{ peer: peer.peer }, peer.live ? 1 : 0]));
  metric('webpp_peer_load_records_total', 'counter', 'Load records received from a peer and kept.', peers.map((peer): Sample => [{ peer: peer.peer }, peer.recordsReceived]));
  if (decisions === undefined) return;
  metric('webpp_peer_load', 'gauge', `Load of each server as last known here (metric: ${decisions.metric}).`, decisions.cluster.map((server): Sample => [{ server: server.server }, server.load]));
  metric('webpp_replication_enabled', 'gauge', 'Whether this server places replicas automatically.', [[{}, decisions.enabled ? 1 : 0]]);
  metric('webpp_replication_decisions_total', 'counter', 'Automatic replication decisions, by kind.', [
    [{ kind: 'place' }, decisions.placements],
    [{ kind: 'withdraw' }, decisions.withdrawals],
    [{ kind: 'recall' }, decisions.recalls],
  ]);
  metric('webpp_replication_flaps_total', 'counter', 'Resources placed, taken back and placed again on one co-op within T_home.', [[{}, decisions.flaps]]);
  metric('webpp_replication_automatic_replicas', 'gauge', 'Automatic replicas this server placed that are in the directory.', [[{}, decisions.automaticReplicas]]);
}
