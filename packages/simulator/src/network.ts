/**
 * The simulated network: the same link model as @webpp/netem (schedules, outages,
 * distributions, request plans), carried out in virtual time instead of on sockets.
 *
 * Outages behave as in the emulator: "reset" and "refuse" fail a request at once (and cut
 * off responses in flight when they start); "hang" black-holes it until the outage ends,
 * when the hung connection is reset.
 *
 * Draws use common random numbers: the plan of an exchange is drawn from a stream named
 * by (seed, server, exchange key), and the key of a logical request is the same under
 * every policy. So every policy faces the very same network luck for request i of client
 * c on server s, and policy differences are not noise.
 *
 * A server with `linkSharing: "shared"` shares its bandwidth among the bodies in flight
 * (shared-link.ts); with `connectionsPerHost` the browser queues requests beyond that many
 * per host (connection-pool.ts); a brownout answers a share of requests with a quick 5xx.
 */
import { createRandom, meanOf, planRequest, type ServerTimeline } from '@webpp/netem/model';
import type { EventQueue } from './event-queue.js';
import { ConnectionPool } from './connection-pool.js';
import { deliverAlone, deliverShared, ExchangeLife, type Delivery } from './delivery.js';
import { SharedLink } from './shared-link.js';
import type { ClientDelay } from './client-delay.js';
import type { PushedValue, ServerQueues } from './server-queue.js';

/** Why an exchange (one HTTP request on the wire) was sent. */
export const EXCHANGE_PURPOSES = ['request', 'retry', 'hedge', 'parallel', 'refresh', 'probe'] as const;
export type ExchangePurpose = (typeof EXCHANGE_PURPOSES)[number];

export interface Exchange {
  server: string;
  method: 'GET' | 'HEAD';
  /** Response body size; 0 for HEAD. */
  bodyBytes: number;
  /** Names the random stream of this exchange (see the module comment). */
  key: string;
  purpose: ExchangePurpose;
}

export interface ExchangeHandlers {
  /**
   * The request left the browser: a connection was free (at once without a pool; after the
   * wait for one of the host's connections under HTTP/1.1). Resource Timing's requestStart.
   */
  onSent?(atMs: number): void;
  /**
   * The response head (first byte) arrived. `pushed`: with server queues, the server's own
   * pushed service time (Server-Timing) and its peers' (webpp-load) that the head carried.
   * `status`: 200 unless a brownout shed the request (a quick 5xx; no body events follow).
   */
  onFirstByte?(atMs: number, pushed?: readonly PushedValue[], status?: number): void;
  /** The whole response arrived. */
  onComplete?(atMs: number): void;
  /** The connection was refused or reset (before or after the first byte). */
  onError?(atMs: number): void;
  /**
   * Bytes stopped flowing at `atMs`: a body stall, or a black-hole outage starting while
   * the request is in flight (before or after its first byte). They resume at
   * `resumesAtMs`, or never (null: an error follows when the outage ends). Lets a client
   * model an inactivity timeout.
   */
  onStall?(atMs: number, resumesAtMs: number | null): void;
}

export interface ExchangeHandle {
  readonly sentAtMs: number;
  /** Abandons the exchange: none of its handlers will be called any more. */
  cancel(): void;
}

export type ExchangeCounts = Record<ExchangePurpose, number>;

export function emptyCounts(): ExchangeCounts {
  return { request: 0, retry: 0, hedge: 0, parallel: 0, refresh: 0, probe: 0 };
}

export interface SimulatedNetworkOptions {
  queue: EventQueue;
  servers: ReadonlyMap<string, ServerTimeline>;
  seed: string | number;
  /** The replica's own time to produce a response head, added to every exchange. Default 0. */
  serviceMs?: number;
  /** Servers with finite capacity (server-queue.ts): their time in the server replaces serviceMs. */
  queues?: ServerQueues;
  /** Time the client itself adds to each exchange, by scenario time (client-delay.ts). Default none. */
  clientDelay?: ClientDelay;
  /** The browser's connections per host (HTTP/1.1: 6); default unlimited (HTTP/2, or the paper's clients). */
  connectionsPerHost?: number;
}

export class SimulatedNetwork {
  readonly counts: ExchangeCounts = emptyCounts();
  /** Body bytes that crossed the links, whole or in part (cancelled and cut bodies count what they had delivered). */
  bytesDelivered = 0;
  readonly pool: ConnectionPool | undefined;
  private readonly queue: EventQueue;
  private readonly servers: ReadonlyMap<string, ServerTimeline>;
  private readonly seed: string | number;
  private readonly serviceMs: number;
  readonly queues: ServerQueues | undefined;
  private readonly clientDelay: ClientDelay | undefined;
  private readonly links = new Map<string, SharedLink>();

  constructor(options: SimulatedNetworkOptions) {
    this.queue = options.queue;
    this.servers = options.servers;
    this.seed = options.seed;
    this.serviceMs = options.serviceMs ?? 0;
    this.queues = options.queues;
    this.clientDelay = options.clientDelay;
    this.pool = options.connectionsPerHost === undefined ? undefined : new ConnectionPool(options.queue, options.connectionsPerHost);
  }

  serverNames(): string[] {
    return [...this.servers.keys()];
  }

  /**
   * What an all-knowing observer would expect a GET of `bodyBytes` to `server` to take if
   * sent now: mean delay + service + mean first-byte stall share + transfer time; Infinity
   * while the server is down. Only the oracle policy may look. It ignores a shared link's
   * other bodies and the connection pool.
   */
  expectedResponseMs(server: string, bodyBytes: number): number {
    const timeline = this.timelineOf(server);
    const nowMs = this.queue.now();
    if (timeline.outageAt(nowMs)) return Number.POSITIVE_INFINITY;
    const link = timeline.linkAt(nowMs);
    const stallMs = link.stall ? link.stall.probability * meanOf(link.stall.durationMs) : 0;
    const transferMs = link.bandwidthBytesPerSec ? (bodyBytes / link.bandwidthBytesPerSec) * 1000 : 0;
    return meanOf(link.delayMs) + this.serviceMs + stallMs + transferMs;
  }

  send(exchange: Exchange, handlers: ExchangeHandlers): ExchangeHandle {
    this.timelineOf(exchange.server);
    this.counts[exchange.purpose]++;
    const life = new ExchangeLife(this.queue);
    const handle: ExchangeHandle = { sentAtMs: this.queue.now(), cancel: () => life.cancel() };
    if (this.pool === undefined) {
      this.start(exchange, handlers, life);
      return handle;
    }
    // The connection is held until the exchange ends or is cancelled.
    const release = this.pool.acquire(exchange.server, () => this.start(exchange, releasing(handlers, () => release()), life));
    life.onCancel(() => release());
    return handle;
  }

  private timelineOf(server: string): ServerTimeline {
    const timeline = this.servers.get(server);
    if (!timeline) throw new RangeError(`unknown server "${server}"`);
    return timeline;
  }

  /** The exchange leaves the browser now (a connection is free). */
  private start(exchange: Exchange, handlers: ExchangeHandlers, life: ExchangeLife): void {
    if (life.cancelled) return;
    const timeline = this.timelineOf(exchange.server);
    const queue = this.queue;
    const sentAtMs = queue.now();
    handlers.onSent?.(sentAtMs);
    const down = timeline.outageAt(sentAtMs);
    if (down) {
      // Refused/reset at once; a black hole answers only with a reset when it ends.
      life.schedule(down.mode === 'hang' ? down.toMs : sentAtMs, () => handlers.onError?.(queue.now()));
      return;
    }

    const plan = planRequest(timeline.linkAt(sentAtMs), createRandom(this.seed, exchange.server, exchange.key));
    const brownout = timeline.brownoutAt(sentAtMs);
    if (brownout && createRandom(this.seed, exchange.server, exchange.key, 'brownout')() < brownout.errorProbability) {
      // Shed: a quick 5xx after the round trip, without the server's queue or a body.
      life.schedule(sentAtMs + plan.delayMs, () => {
        handlers.onFirstByte?.(queue.now(), undefined, brownout.status ?? 503);
        if (!life.cancelled) handlers.onComplete?.(queue.now());
      });
      return;
    }
    // The client's own time (client-delay.ts): before the head, and after the body left the link (GETs only).
    const client = this.clientDelay?.at(sentAtMs) ?? { firstByteMs: 0, bodyMs: 0 };
    const clientBodyMs = exchange.method === 'HEAD' ? 0 : client.bodyMs;
    const serverQueue = this.queues?.get(exchange.server);
    const deliver = (serviceMs: number, pushed: readonly PushedValue[] | undefined): void => {
      const delivery: Delivery = { queue, addBytes: (bytes) => void (this.bytesDelivered += bytes), exchange, handlers, timeline, plan, sentAtMs, serviceMs, clientBodyMs, pushed, life };
      if (timeline.linkSharing === 'shared') deliverShared(delivery, this.linkOf(exchange.server, timeline));
      else deliverAlone(delivery);
    };
    if (serverQueue === undefined) {
      deliver(this.serviceMs + client.firstByteMs, undefined);
      return;
    }
    // Half the round trip on the way in; then the server's queue (it serves even what the client has cancelled since).
    queue.at(sentAtMs + plan.delayMs / 2, () => {
      const inServerMs = serverQueue.admit(queue.now());
      deliver(inServerMs + client.firstByteMs, this.queues?.carriedBy(exchange.server, queue.now()));
    });
  }

  private linkOf(server: string, timeline: ServerTimeline): SharedLink {
    let link = this.links.get(server);
    if (!link) {
      link = new SharedLink(this.queue, (tMs) => timeline.linkAt(tMs).bandwidthBytesPerSec ?? null);
      this.links.set(server, link);
    }
    return link;
  }
}

/** The handlers, releasing the exchange's connection when it ends (complete or error). */
function releasing(handlers: ExchangeHandlers, release: () => void): ExchangeHandlers {
  return {
    onSent: (atMs) => handlers.onSent?.(atMs),
    onFirstByte: (atMs, pushed, status) => handlers.onFirstByte?.(atMs, pushed, status),
    onStall: (atMs, resumesAtMs) => handlers.onStall?.(atMs, resumesAtMs),
    onComplete: (atMs) => {
      release();
      handlers.onComplete?.(atMs);
    },
    onError: (atMs) => {
      release();
      handlers.onError?.(atMs);
    },
  };
}
