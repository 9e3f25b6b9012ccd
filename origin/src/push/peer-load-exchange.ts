/**
 * Sends this server's pushed service time to every peer (issue 13; Fei et al. 1998, Section
 * 4: "the new measurement is pushed"): at most once per measurement interval I, when the
 * pushed value changed since the last message to that peer, and at least every
 * `heartbeatMs` (the directory's anti-entropy period), so that a peer's copy never gets
 * older than peerLoadMaxAgeMs while both are up. Each answer carries the peer's own value
 * (peer-load-routes.ts), so one round trip updates both sides. One message per peer in
 * flight; failures are only logged (the next interval tries again).
 */
import { clusterRequest } from '../sync/cluster-client.js';
import { encodePeerLoadMessage, parsePeerLoadMessage, PEER_LOAD_PATH, type PeerLoadMessage } from './peer-load-message.js';
import type { PeerLoads } from './peer-loads.js';

interface ExchangeLogger {
  debug(object: object, message: string): void;
}

export interface PeerLoadExchangeOptions {
  peers: readonly string[];
  secret: string;
  timeoutMs: number;
  /** I: how often to look for a new value. */
  intervalMs: number;
  /** Re-send an unchanged value after this long. */
  heartbeatMs: number;
  peerLoads: PeerLoads;
  ownMessage: () => PeerLoadMessage | undefined;
  log: ExchangeLogger;
}

interface PeerState {
  /** `ageMs`-free identity of the value sent last: its push time on our clock. */
  sentPushAtMs: number | undefined;
  sentAtMs: number;
  inFlight: boolean;
}

export class PeerLoadExchange {
  private timer: NodeJS.Timeout | undefined;
  private readonly state = new Map<string, PeerState>();
  private readonly inFlight = new Set<Promise<void>>();
  /** Messages answered 200 / 204, and failed ones. */
  sent = 0;
  failed = 0;

  constructor(private readonly options: PeerLoadExchangeOptions) {
    for (const peer of options.peers) this.state.set(peer, { sentPushAtMs: undefined, sentAtMs: 0, inFlight: false });
  }

  start(): void {
    if (this.timer !== undefined || this.options.peers.length === 0) return;
    this.timer = setInterval(() => this.tick(), this.options.intervalMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    if (this.timer !== undefined) clearInterval(this.timer);
    this.timer = undefined;
    await Promise.allSettled([...this.inFlight]);
  }

  /** Sends to every peer whose copy is out of date (also called by tests). */
  tick(nowMs: number = Date.now()): void {
    const own = this.options.ownMessage();
    if (own === undefined) return;
    const pushAtMs = own.sentAtMs - own.ageMs;
    for (const [peer, state] of this.state) {
      if (state.inFlight) continue;
      if (state.sentPushAtMs === pushAtMs && nowMs - state.sentAtMs < this.options.heartbeatMs) continue;
      state.inFlight = true;
      const sending = this.send(peer, own, state).finally(() => {
        state.inFlight = false;
        this.inFlight.delete(sending);
      });
      this.inFlight.add(sending);
    }
  }

  private async send(peer: string, own: PeerLoadMessage, state: PeerState): Promise<void> {
    try {
      const response = await clusterRequest(this.options.secret, new URL(PEER_LOAD_PATH, peer).href, {
        method: 'POST',
        body: encodePeerLoadMessage(own),
        headers: { 'content-type': 'application/json' },
        timeoutMs: this.options.timeoutMs,
        maxResponseBytes: 4096,
      });
      if (response.status !== 200 && response.status !== 204) throw new Error(`peer answered ${response.status}`);
      state.sentPushAtMs = own.sentAtMs - own.ageMs;
      state.sentAtMs = own.sentAtMs;
      this.sent += 1;
      if (response.status === 200) this.options.peerLoads.learn(parsePeerLoadMessage(response.body), Date.now());
    } catch (error) {
      this.failed += 1;
      this.options.log.debug({ peer, err: (error as Error).message }, 'webpp service-time exchange with peer failed; retried next interval');
    }
  }
}
