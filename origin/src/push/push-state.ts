/**
 * The server push of one origin (issue 13), built from the resolved options: its own
 * service time (core's ServiceTimePush), carried to the peers in the peer load record
 * (peer-loads.ts) and announced when it changes (push-announcer.ts), the peers' latest
 * values, the concurrency limit that gives it a finite capacity (http/concurrency-gate.ts),
 * the utilisation pushed with the service time (stats/utilisation.ts, made by the plugin: replication
 * reads the same meter), and their statistics.
 */
import type { ResolvedOptions } from '../options.js';
import type { PeerGossip } from '../sync/peer-gossip.js';
import { PushAnnouncer } from './push-announcer.js';
import { addServiceTimeFields, PeerLoads, type OwnServiceTime } from './peer-loads.js';
import type { MeteredConcurrencyGate, UtilisationMeter } from '../stats/utilisation.js';
import { ServiceTimePush } from '@webpp/core';

/** The push block of the statistics (`/.well-known/webpp/stats` → origin.push, and /metrics). */
export interface PushGauges {
  /** The value pushed last, and the smoothed value P the push rule watches (ms). */
  pushedServiceMs: number | null;
  smoothedServiceMs: number | null;
  /** The utilisation pushed with it (Server-Timing `util`, 0–1; null before the first interval closed). */
  pushedUtilisation: number | null;
  pushes: number;
  /** Peers' values as they are forwarded in webpp-load. */
  peers: { server: string; serviceMs: number; utilisation?: number; ageMs: number }[];
  /** The concurrency limit (null when off). */
  concurrency: { limit: number; active: number; queued: number; queuedTotal: number; refusedTotal: number } | null;
  /** Pings announcing a new value to the peers (push-announcer.ts): answered with a record, and not. */
  exchange: { sent: number; failed: number } | null;
}

/** The push's slice of the options: its switch, the capacity and the constants of Fei's rule (options/internals.ts). */
type PushOptions = Pick<
  ResolvedOptions,
  'pushServiceTime' | 'serviceTimeIntervalMs' | 'serviceTimeSmoothing' | 'serviceTimeThreshold' | 'serviceTimeThresholdDecay' | 'serviceTimeFloorMs' | 'maxConcurrentRequests' | 'peerLoadMaxAgeMs'
>;

export class PushState {
  readonly push: ServiceTimePush;
  readonly peerLoads: PeerLoads;
  readonly gate: MeteredConcurrencyGate | undefined;
  /** This server's busy share of the last interval I, pushed with its service time. */
  readonly utilisation: UtilisationMeter;
  /** Pings the peers when the pushed value changes (undefined without peers or with push off). */
  readonly announcer: PushAnnouncer | undefined;

  /**
   * @param gossip the peer load records and the pinger (undefined without peers or a cluster secret).
   * @param capacity the concurrency limit (undefined: none) and the server's utilisation meter.
   */
  constructor(
    private readonly options: PushOptions,
    gossip: PeerGossip | undefined,
    capacity: { gate: MeteredConcurrencyGate | undefined; meter: UtilisationMeter },
    private readonly now: () => number = Date.now,
  ) {
    this.push = new ServiceTimePush({
      intervalMs: options.serviceTimeIntervalMs,
      smoothing: options.serviceTimeSmoothing,
      threshold: options.serviceTimeThreshold,
      thresholdDecay: options.serviceTimeThresholdDecay,
      floorMs: options.serviceTimeFloorMs,
    });
    this.peerLoads = new PeerLoads(options.pushServiceTime ? gossip?.state : undefined);
    if (options.pushServiceTime && gossip !== undefined) {
      addServiceTimeFields(gossip.state, () => this.ownServiceTime());
      this.announcer = new PushAnnouncer({
        state: gossip.state,
        pinger: gossip.pinger,
        intervalMs: options.serviceTimeIntervalMs,
        pushedAtMs: () => this.push.current(this.now())?.atMs,
        utilisation: () => capacity.meter.current(),
      });
    }
    this.gate = capacity.gate;
    this.utilisation = capacity.meter;
  }

  /** This server's value as its peers get it (undefined before its first request). */
  ownServiceTime(): OwnServiceTime | undefined {
    const nowMs = this.now();
    const current = this.push.current(nowMs);
    if (current === undefined) return undefined;
    const ageMs = Math.max(0, nowMs - current.atMs);
    const utilisation = this.utilisation.current();
    return utilisation === undefined ? { serviceMs: current.serviceMs, ageMs } : { serviceMs: current.serviceMs, utilisation, ageMs };
  }

  gauges(): PushGauges {
    const nowMs = this.now();
    const gate = this.gate;
    const current = this.push.current(nowMs);
    const utilisation = this.utilisation.current();
    return {
      pushedServiceMs: current?.serviceMs ?? null,
      // To 0.01, as Server-Timing carries it.
      pushedUtilisation: current === undefined || utilisation === undefined ? null : Math.round(utilisation * 100) / 100,
      smoothedServiceMs: this.push.smoothed(nowMs) ?? null,
      pushes: this.push.pushes,
      peers: this.peerLoads.fresh(nowMs, this.options.peerLoadMaxAgeMs),
      concurrency:
        gate === undefined
          ? null
          : { limit: this.options.maxConcurrentRequests, active: gate.active, queued: gate.queued, queuedTotal: gate.queuedTotal, refusedTotal: gate.refusedTotal },
      exchange: this.announcer === undefined ? null : { sent: this.announcer.sent, failed: this.announcer.failed },
    };
  }
}

/** The push block in Prometheus text format (appended to /metrics). */
export function pushPrometheusLines(gauges: PushGauges): string[] {
  const lines: string[] = [];
  const metric = (name: string, type: 'counter' | 'gauge', help: string, samples: [string, number][]): void => {
    lines.push(`# HELP ${name} ${help}`, `# TYPE ${name} ${type}`);
    for (const [labels, value] of samples) lines.push(`${name}${labels} ${value}`);
  };
  if (gauges.pushedServiceMs !== null) metric('webpp_push_service_ms', 'gauge', 'Service time this server pushes (Server-Timing webpp;dur).', [['', gauges.pushedServiceMs]]);
  if (gauges.smoothedServiceMs !== null) metric('webpp_push_smoothed_service_ms', 'gauge', 'Smoothed service time P the push rule watches.', [['', gauges.smoothedServiceMs]]);
  if (gauges.pushedUtilisation !== null) metric('webpp_push_utilisation', 'gauge', 'Busy share (0-1) of the last interval this server pushes with it (Server-Timing webpp;util).', [['', gauges.pushedUtilisation]]);
  metric('webpp_push_updates_total', 'counter', 'Times the pushed service time changed or was re-pushed.', [['', gauges.pushes]]);
  const peerLabel = (server: string): string => `{peer="${server.replace(/["\\\n]/g, '')}"}`;
  metric('webpp_push_peer_service_ms', 'gauge', "A peer's pushed service time, as forwarded in webpp-load.", gauges.peers.map((peer) => [peerLabel(peer.server), peer.serviceMs]));
  const peerUtilisation = gauges.peers.flatMap((peer): [string, number][] => (peer.utilisation === undefined ? [] : [[peerLabel(peer.server), peer.utilisation]]));
  metric('webpp_push_peer_utilisation', 'gauge', "A peer's pushed utilisation (0-1), as forwarded in webpp-load (util).", peerUtilisation);
  if (gauges.concurrency !== null) {
    const gate = gauges.concurrency;
    metric('webpp_concurrency_active', 'gauge', 'Requests holding a slot of maxConcurrentRequests.', [['', gate.active]]);
    metric('webpp_concurrency_queued', 'gauge', 'Requests waiting for a slot.', [['', gate.queued]]);
    metric('webpp_concurrency_queued_total', 'counter', 'Requests that had to wait for a slot.', [['', gate.queuedTotal]]);
    metric('webpp_concurrency_refused_total', 'counter', 'Requests refused with 503 because the queue was full.', [['', gate.refusedTotal]]);
  }
  if (gauges.exchange !== null) {
    metric('webpp_push_exchange_total', 'counter', 'Pings announcing a new pushed service time to peers, by result.', [
      ['{result="ok"}', gauges.exchange.sent],
      ['{result="failed"}', gauges.exchange.failed],
    ]);
  }
  return lines;
}
