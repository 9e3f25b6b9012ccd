/**
 * The server push of one origin (issue 13), built from the resolved options: its own
 * service time (core's ServiceTimePush), its peers' latest values (peer-loads.ts), the concurrency
 * limit that gives it a finite capacity (http/concurrency-gate.ts), and their statistics.
 */
import { ConcurrencyGate } from '../http/concurrency-gate.js';
import type { ResolvedOptions } from '../options.js';
import type { PeerLoadMessage } from './peer-load-message.js';
import { PeerLoadExchange } from './peer-load-exchange.js';
import { PeerLoads } from './peer-loads.js';
import { ServiceTimePush } from '@webpp/core';

interface PushLogger {
  debug(object: object, message: string): void;
}

/** The push block of the statistics (`/.well-known/webpp/stats` → origin.push, and /metrics). */
export interface PushGauges {
  /** The value pushed last, and the smoothed value P the push rule watches (ms). */
  pushedServiceMs: number | null;
  smoothedServiceMs: number | null;
  pushes: number;
  /** Peers' values as they are forwarded in webpp-load. */
  peers: { server: string; serviceMs: number; ageMs: number }[];
  /** The concurrency limit (null when off). */
  concurrency: { limit: number; active: number; queued: number; queuedTotal: number; refusedTotal: number } | null;
  /** Messages of the peer exchange answered, and failed. */
  exchange: { sent: number; failed: number } | null;
}

export class PushState {
  readonly push: ServiceTimePush;
  readonly peerLoads: PeerLoads;
  readonly gate: ConcurrencyGate | undefined;
  /** Sends the pushed value to the peers (undefined without peers or with push off). */
  readonly exchange: PeerLoadExchange | undefined;

  constructor(
    private readonly options: ResolvedOptions,
    log: PushLogger,
    private readonly now: () => number = Date.now,
  ) {
    this.push = new ServiceTimePush({
      intervalMs: options.serviceTimeIntervalMs,
      smoothing: options.serviceTimeSmoothing,
      threshold: options.serviceTimeThreshold,
      thresholdDecay: options.serviceTimeThresholdDecay,
      floorMs: options.serviceTimeFloorMs,
    });
    this.peerLoads = new PeerLoads(options.publicUrl);
    this.exchange =
      options.pushServiceTime && options.peers.length > 0 && options.clusterSecret !== undefined
        ? new PeerLoadExchange({
            peers: options.peers,
            secret: options.clusterSecret,
            timeoutMs: options.peerTimeoutMs,
            intervalMs: options.serviceTimeIntervalMs,
            heartbeatMs: options.syncIntervalMs,
            peerLoads: this.peerLoads,
            ownMessage: () => this.ownMessage(),
            log,
          })
        : undefined;
    this.gate =
      options.maxConcurrentRequests > 0
        ? new ConcurrencyGate({ maxConcurrentRequests: options.maxConcurrentRequests, maxQueuedRequests: options.maxQueuedRequests })
        : undefined;
  }

  /** This server's value as a peer message (undefined before its first request). */
  ownMessage(): PeerLoadMessage | undefined {
    const nowMs = this.now();
    const current = this.push.current(nowMs);
    if (current === undefined) return undefined;
    return { server: this.options.publicUrl, serviceMs: current.serviceMs, ageMs: Math.max(0, nowMs - current.atMs), sentAtMs: nowMs };
  }

  gauges(): PushGauges {
    const nowMs = this.now();
    const gate = this.gate;
    return {
      pushedServiceMs: this.push.current(nowMs)?.serviceMs ?? null,
      smoothedServiceMs: this.push.smoothed(nowMs) ?? null,
      pushes: this.push.pushes,
      peers: this.peerLoads.fresh(nowMs, this.options.peerLoadMaxAgeMs),
      concurrency:
        gate === undefined
          ? null
          : { limit: this.options.maxConcurrentRequests, active: gate.active, queued: gate.queued, queuedTotal: gate.queuedTotal, refusedTotal: gate.refusedTotal },
      exchange: this.exchange === undefined ? null : { sent: this.exchange.sent, failed: this.exchange.failed },
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
  metric('webpp_push_updates_total', 'counter', 'Times the pushed service time changed or was re-pushed.', [['', gauges.pushes]]);
  metric('webpp_push_peer_service_ms', 'gauge', "A peer's pushed service time, as forwarded in webpp-load.", gauges.peers.map((peer) => [`{peer="${peer.server.replace(/["\\\n]/g, '')}"}`, peer.serviceMs]));
  if (gauges.concurrency !== null) {
    const gate = gauges.concurrency;
    metric('webpp_concurrency_active', 'gauge', 'Requests holding a slot of maxConcurrentRequests.', [['', gate.active]]);
    metric('webpp_concurrency_queued', 'gauge', 'Requests waiting for a slot.', [['', gate.queued]]);
    metric('webpp_concurrency_queued_total', 'counter', 'Requests that had to wait for a slot.', [['', gate.queuedTotal]]);
    metric('webpp_concurrency_refused_total', 'counter', 'Requests refused with 503 because the queue was full.', [['', gate.refusedTotal]]);
  }
  if (gauges.exchange !== null) {
    metric('webpp_push_exchange_total', 'counter', 'Service-time messages to peers, by result.', [
      ['{result="ok"}', gauges.exchange.sent],
      ['{result="failed"}', gauges.exchange.failed],
    ]);
  }
  return lines;
}
