/**
 * Sets up the exchange of load records between peers: PeerState (what is known of each
 * peer), the pinger, and this server's own figures. Present when the server has peers and
 * a cluster secret; the directory sync carries the records, the pinger fills the gaps.
 * Every peer call carries a record, so the figures behind it are computed at most once a second.
 */
import { PeerState, type OwnLoad } from './peer-state.js';
import { PEER_STATE_HEADER } from './load-record.js';
import { Pinger } from './pinger.js';
import type { PeerPiggyback } from './peer-sync.js';
import type { ResolvedOptions } from '../options.js';

interface GossipLogger {
  debug(object: object, message: string): void;
  warn(object: object, message: string): void;
}

export interface PeerGossip {
  state: PeerState;
  pinger: Pinger;
  /** What the directory sync carries (PeerSyncOptions.piggyback). */
  piggyback: PeerPiggyback;
}

/** This server's figures are recomputed at most this often (every peer call carries them). */
const OWN_LOAD_REUSE_MS = 1000;

/** `compute`, reusing its last result for `reuseMs`. */
function reused<T>(compute: () => T, reuseMs: number, clock: () => number = Date.now): () => T {
  let last: { value: T; atMs: number } | undefined;
  return () => {
    const nowMs = clock();
    if (last === undefined || nowMs - last.atMs >= reuseMs) last = { value: compute(), atMs: nowMs };
    return last.value;
  };
}

export function createPeerGossip(
  options: Pick<ResolvedOptions, 'publicUrl' | 'peers' | 'clusterSecret' | 'peerTimeoutMs' | 'maxClockSkewMs' | 'peerPingIntervalMs' | 'peerMissedPingsForDown'>, ownLoad: () => OwnLoad, log: GossipLogger): PeerGossip | undefined {
  const secret = options.clusterSecret;
  if (options.peers.length === 0 || secret === undefined) return undefined;
  const state = new PeerState({
    self: options.publicUrl,
    peers: options.peers,
    ownLoad: reused(ownLoad, OWN_LOAD_REUSE_MS),
    missedPingsForDown: options.peerMissedPingsForDown,
    maxClockSkewMs: options.maxClockSkewMs,
  });
  state.onPeerDown((peer) => log.warn({ peer, missedPings: options.peerMissedPingsForDown }, 'webpp peer is down (unanswered pings)'));
  state.onPeerUp((peer) => log.warn({ peer }, 'webpp peer is up again'));
  const pinger = new Pinger({ state, secret, intervalMs: options.peerPingIntervalMs, timeoutMs: options.peerTimeoutMs, log });
  const piggyback: PeerPiggyback = {
    outgoingHeaders: () => state.outgoingHeaders(),
    answered: (peer, headers) => {
      state.heard(peer);
      state.receive(headers[PEER_STATE_HEADER], peer);
    },
  };
  return { state, pinger, piggyback };
}
