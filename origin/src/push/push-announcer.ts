/**
 * Announces a newly pushed service time to the peers at once (issue 13; Fei et al. 1998,
 * Section 4: "the new measurement is pushed"). The value itself rides in the peer load record
 * (peer-loads.ts), which the directory sync and the pinger carry anyway; they may be up to
 * syncIntervalMs / peerPingIntervalMs apart, so when the pushed value changes (at most once
 * per measurement interval I, core's ServiceTimePush) this pings every live peer — one signed
 * ping carries our record and brings back theirs (sync/pinger.ts). No message format or
 * route of its own. At most one ping per peer in flight (the pinger's rule): a ping already
 * in flight carries the record made when it started, without the new value, so that peer
 * stays owed the announcement and gets its own ping at a later check, once that one is back.
 *
 * The utilisation pushed with the service time (stats/utilisation.ts) changes on its own: a
 * server whose slots fill up with requests of the same length keeps its service time and
 * pushes no new value, while clients spreading by utilisation (core's load-spread.ts) need to
 * know. So a move of the utilisation by UTILISATION_STEP or more since the last announcement
 * is announced too (checked once per I, like the service time).
 */
import type { Pinger } from '../sync/pinger.js';
import type { PeerState } from '../sync/peer-state.js';

export interface PushAnnouncerOptions {
  state: PeerState;
  pinger: Pinger;
  /** I: how often to look for a new value. */
  intervalMs: number;
  /** When the value pushed last was pushed (undefined before the first request). */
  pushedAtMs: () => number | undefined;
  /** The utilisation of the last full interval (undefined while the server cannot tell). */
  utilisation: () => number | undefined;
}

/**
 * A change of utilisation worth a ping: a tenth of the range, as the service time's 10 %
 * threshold (serviceTimeThreshold), and at least the load spread's floor of 0.2 is two steps.
 */
const UTILISATION_STEP = 0.1;

export class PushAnnouncer {
  private timer: NodeJS.Timeout | undefined;
  private announcedAtMs: number | undefined;
  private announcedUtilisation: number | undefined;
  /** Live peers not yet sent a ping that carries the value announced last. */
  private readonly owed = new Set<string>();
  private readonly inFlight = new Set<Promise<boolean>>();
  /** Pings that announced a new value and were answered with a record, and the others. */
  sent = 0;
  failed = 0;

  constructor(private readonly options: PushAnnouncerOptions) {}

  start(): void {
    if (this.timer !== undefined || this.options.state.peers.length === 0) return;
    this.timer = setInterval(() => this.tick(), this.options.intervalMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    if (this.timer !== undefined) clearInterval(this.timer);
    this.timer = undefined;
    await Promise.allSettled([...this.inFlight]);
  }

  /**
   * Pings every live peer if a value was pushed, or the utilisation moved a step, since the
   * last announcement; a peer with a ping in flight is pinged at a later check.
   */
  tick(): void {
    const pushedAtMs = this.options.pushedAtMs();
    if (pushedAtMs === undefined) return; // nothing to announce before the first request
    const utilisation = this.options.utilisation();
    const utilisationMoved =
      utilisation !== undefined && (this.announcedUtilisation === undefined || Math.abs(utilisation - this.announcedUtilisation) >= UTILISATION_STEP);
    if (pushedAtMs !== this.announcedAtMs || utilisationMoved) {
      this.announcedAtMs = pushedAtMs;
      this.announcedUtilisation = utilisation;
      for (const peer of this.options.state.livePeers()) this.owed.add(peer);
    }
    for (const peer of this.owed) {
      if (!this.options.state.isLive(peer)) {
        this.owed.delete(peer); // the pinger's own pings bring it back, with a fresh record
        continue;
      }
      if (this.options.pinger.pinging(peer)) continue;
      this.owed.delete(peer);
      const ping = this.options.pinger.ping(peer).then((answered) => {
        if (answered) this.sent += 1;
        else this.failed += 1;
        return answered;
      });
      this.inFlight.add(ping);
      void ping.finally(() => this.inFlight.delete(ping));
    }
  }
}
