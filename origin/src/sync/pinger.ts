/**
 * The pinger (DCWS, Baker and Moon 1998, Section 4.5: it "is responsible for periodically
 * waking up and initiating an artificial HTTP request with any co-op servers that have not
 * communicated within a certain interval"). Every half period it pings each peer that has
 * been quiet (nothing heard, no ping sent) for `intervalMs` (the paper's T_pi): a signed
 * POST to PING_PATH carrying this server's load record, answered with the peer's. A ping
 * that gets no answer (network error, timeout) is a miss (PeerState decides when a peer
 * is down), and so is one the peer refuses with 401 or 403: it does not accept this
 * server's signature (another cluster secret, clocks further apart than maxClockSkewMs, no
 * secret at all), so it can neither sync, nor take pushes, nor serve lazy fetches, and its
 * automatic replicas must be recalled as if it were down. Any other HTTP answer means the
 * peer is alive.
 */
import { WELL_KNOWN_PREFIX } from '@webpp/core';
import { clusterRequest } from './cluster-client.js';
import { PEER_STATE_HEADER } from './load-record.js';
import type { PeerState } from './peer-state.js';

const PEER_STATE_PATH = `${WELL_KNOWN_PREFIX}peer/state`;
export const PING_PATH = `${PEER_STATE_PATH}/ping`;

interface PingerLogger {
  debug(object: object, message: string): void;
  warn(object: object, message: string): void;
}

export interface PingerOptions {
  state: PeerState;
  secret: string;
  /** T_pi: a peer quiet for this long is pinged. */
  intervalMs: number;
  timeoutMs: number;
  log: PingerLogger;
}

export class Pinger {
  private timer: NodeJS.Timeout | undefined;
  private readonly lastPingAtMs = new Map<string, number>();
  private readonly inFlight = new Map<string, Promise<boolean>>();
  /** Peers whose last ping was refused (401/403), so that the warning is logged once. */
  private readonly refusedBy = new Set<string>();
  pingsSent = 0;
  pingsMissed = 0;

  constructor(private readonly options: PingerOptions) {}

  start(): void {
    if (this.timer !== undefined || this.options.state.peers.length === 0) return;
    this.timer = setInterval(() => this.pingQuiet(), Math.max(10, Math.floor(this.options.intervalMs / 2)));
    this.timer.unref();
    this.pingQuiet();
  }

  async stop(): Promise<void> {
    if (this.timer !== undefined) clearInterval(this.timer);
    this.timer = undefined;
    await Promise.allSettled([...this.inFlight.values()]);
  }

  /** Pings every peer quiet for T_pi (at most one ping in flight per peer). */
  pingQuiet(): void {
    const { state, intervalMs } = this.options;
    const nowMs = Date.now();
    for (const peer of state.peers) {
      const quietSinceMs = Math.max(state.lastHeardAtMs(peer), this.lastPingAtMs.get(peer) ?? 0);
      if (nowMs - quietSinceMs >= intervalMs) void this.ping(peer);
    }
  }

  /** A ping the peer refused (401/403): a miss, logged at warn once until it accepts one again. */
  private refused(peer: string, status: number, answer: string): void {
    this.pingsMissed += 1;
    this.options.state.missedPing(peer);
    if (this.refusedBy.has(peer)) return;
    this.refusedBy.add(peer);
    this.options.log.warn(
      { peer, status, answer },
      'webpp peer refuses this server\'s signed calls: give every server the same cluster secret and keep their clocks within maxClockSkewMs',
    );
  }

  /** Whether a ping to the peer is in flight (its record was built when it started). */
  pinging(peer: string): boolean {
    return this.inFlight.has(peer);
  }

  /** One ping; resolves true when the peer answered 2xx with a record. Never rejects. */
  ping(peer: string): Promise<boolean> {
    const running = this.inFlight.get(peer);
    if (running !== undefined) return running;
    this.lastPingAtMs.set(peer, Date.now());
    this.pingsSent += 1;
    const { state, secret, timeoutMs } = this.options;
    const attempt = clusterRequest(secret, new URL(PING_PATH, peer).href, { method: 'POST', headers: state.outgoingHeaders(), timeoutMs, maxResponseBytes: 4096 })
      .then((response) => {
        if (response.status === 401 || response.status === 403) {
          this.refused(peer, response.status, new TextDecoder().decode(response.body).slice(0, 300));
          return false;
        }
        this.refusedBy.delete(peer);
        state.heard(peer);
        if (response.status >= 300) {
          this.options.log.debug({ peer, status: response.status }, 'webpp ping answered without a load record');
          return false;
        }
        return state.receive(response.headers[PEER_STATE_HEADER], peer) !== undefined;
      })
      .catch((error: unknown) => {
        this.pingsMissed += 1;
        state.missedPing(peer);
        this.options.log.debug({ peer, err: (error as Error).message }, 'webpp ping missed');
        return false;
      })
      .finally(() => this.inFlight.delete(peer));
    this.inFlight.set(peer, attempt);
    return attempt;
  }
}
