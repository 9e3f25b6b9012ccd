/**
 * Options of the peer load records and the pinger (sync/peer-state.ts, sync/pinger.ts),
 * composed into the plugin's options (plugin-schema.ts).
 */
import { Type } from 'typebox';
import { defaulted } from './resolved.js';

export const peerStateOptionProperties = {
  peerPingIntervalMs: defaulted(
    Type.Integer({
      minimum: 10,
      maximum: 3_600_000,
      default: 20_000,
      description:
        "T_pi: a peer heard nothing from for this long is pinged (a signed call exchanging load records). Higher: staler load figures, slower failure detection; lower: more pings. DCWS's Table 1 value.",
      cli: { group: 'Replication' },
    }),
  ),
  peerMissedPingsForDown: defaulted(
    Type.Integer({
      minimum: 1,
      maximum: 100,
      default: 3,
      description: 'Consecutive unanswered pings after which a peer is down (its automatic replicas are recalled). Lower: faster recall, more false alarms.',
      cli: { group: 'Replication' },
    }),
  ),
};
