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
import { createRandom, meanOf, planRequest, responseTiming, type RequestPlan, type ServerTimeline } from '@webpp/netem/model';
import type { EventQueue, TimerHandle } from './event-queue.js';
import { ConnectionPool } from './connection-pool.js';
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

/** The timers and clean-ups of one exchange, all dropped when it is cancelled. */
class ExchangeLife {
  cancelled = false;
  private readonly timers: TimerHandle[] = [];
  private readonly stops: Array<() => void> = [];

  constructor(private readonly queue: EventQueue) {}

  schedule(atMs: number, run: () => void): void {
    if (!this.cancelled) this.timers.push(this.queue.at(atMs, run));
  }

  onCancel(stop: () => void): void {
    this.stops.push(stop);
  }

  cancel(): void {
    if (this.cancelled) return;
    this.cancelled = true;
    for (const timer of this.timers) this.queue.cancel(timer);
    for (const stop of this.stops) stop();
  }
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
      const delivery: Delivery = { exchange, handlers, timeline, plan, sentAtMs, serviceMs, clientBodyMs, pushed, life };
      if (timeline.linkSharing === 'shared') this.deliverShared(delivery);
      else this.deliver(delivery);
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

  /** An outage that starts before the head: reset at its start, or frozen until its end. */
  private cutBeforeHead(delivery: Delivery, firstByteAtMs: number): boolean {
    const { timeline, sentAtMs, life, handlers } = delivery;
    const cut = timeline.outageStartingIn(sentAtMs, firstByteAtMs);
    if (!cut) return false;
    if (cut.mode === 'hang') {
      life.schedule(cut.fromMs, () => handlers.onStall?.(this.queue.now(), null));
      life.schedule(cut.toMs, () => handlers.onError?.(this.queue.now()));
    } else {
      life.schedule(cut.fromMs, () => handlers.onError?.(this.queue.now()));
    }
    return true;
  }

  /**
   * Each body has the whole bandwidth (the paper's model). Schedules the head, the body,
   * stalls and cuts of an exchange. `serviceMs` delays the head; `clientBodyMs` delays only
   * the completion the client sees (the last byte has left the link, so an outage starting
   * meanwhile does not cut it).
   */
  private deliver(delivery: Delivery): void {
    const { exchange, handlers, timeline, plan, sentAtMs, serviceMs, clientBodyMs, pushed, life } = delivery;
    const queue = this.queue;
    const bodyBytes = exchange.method === 'HEAD' ? 0 : exchange.bodyBytes;
    const timing = responseTiming(plan, bodyBytes, serviceMs);
    const firstByteAtMs = sentAtMs + timing.firstByteMs;
    const completeAtMs = sentAtMs + timing.completeMs;
    if (this.cutBeforeHead(delivery, firstByteAtMs)) return;
    const cut = timeline.outageStartingIn(sentAtMs, completeAtMs);
    // Bytes delivered by tMs, at the plan's pace (stalls ignored): for cancelled and cut bodies.
    const bytesBy = (tMs: number): number =>
      plan.bandwidthBytesPerSec === null ? bodyBytes : Math.min(bodyBytes, Math.max(0, ((tMs - firstByteAtMs) * plan.bandwidthBytesPerSec) / 1000));
    let counted = false;
    const count = (bytes: number): void => {
      if (counted) return;
      counted = true;
      this.bytesDelivered += bytes;
    };
    life.onCancel(() => count(bytesBy(Math.min(queue.now(), cut?.fromMs ?? Number.POSITIVE_INFINITY))));
    life.schedule(firstByteAtMs, () => handlers.onFirstByte?.(queue.now(), pushed));
    const bodyStallAtMs = firstByteAtMs + (completeAtMs - firstByteAtMs - (plan.stallPhase === 'body' ? plan.stallMs : 0)) * plan.stallAfterFraction;
    if (plan.stallPhase === 'body' && plan.stallMs > 0 && (!cut || bodyStallAtMs < cut.fromMs)) {
      life.schedule(bodyStallAtMs, () => handlers.onStall?.(queue.now(), bodyStallAtMs + plan.stallMs));
    }
    if (cut) {
      // Cut off in the middle of the body: reset at once, or frozen until the outage ends.
      life.schedule(cut.fromMs, () => count(bytesBy(cut.fromMs)));
      if (cut.mode === 'hang') {
        life.schedule(cut.fromMs, () => handlers.onStall?.(queue.now(), null));
        life.schedule(cut.toMs, () => handlers.onError?.(queue.now()));
      } else {
        life.schedule(cut.fromMs, () => handlers.onError?.(queue.now()));
      }
    } else {
      life.schedule(completeAtMs, () => count(bodyBytes));
      life.schedule(completeAtMs + clientBodyMs, () => handlers.onComplete?.(queue.now()));
    }
  }

  /** The body shares the server's link with the others in flight (shared-link.ts). */
  private deliverShared(delivery: Delivery): void {
    const { exchange, handlers, timeline, plan, sentAtMs, serviceMs, clientBodyMs, pushed, life } = delivery;
    const queue = this.queue;
    const bodyBytes = exchange.method === 'HEAD' ? 0 : exchange.bodyBytes;
    const firstByteAtMs = sentAtMs + responseTiming(plan, 0, serviceMs).firstByteMs;
    if (this.cutBeforeHead(delivery, firstByteAtMs)) return;
    life.schedule(firstByteAtMs, () => {
      handlers.onFirstByte?.(queue.now(), pushed);
      if (life.cancelled) return;
      let ended = false;
      const bodyStalls = plan.stallPhase === 'body' && plan.stallMs > 0;
      const transfer = this.linkOf(exchange.server, timeline).start({
        bodyBytes,
        stallAfterBytes: bodyStalls ? plan.stallAfterFraction * bodyBytes : bodyBytes,
        stallMs: bodyStalls ? plan.stallMs : 0,
        onStall: (atMs, resumesAtMs) => handlers.onStall?.(atMs, resumesAtMs),
        onComplete: (atMs) => {
          ended = true;
          this.bytesDelivered += bodyBytes;
          life.schedule(atMs + clientBodyMs, () => handlers.onComplete?.(queue.now()));
        },
      });
      const stop = (): void => {
        if (ended) return;
        ended = true;
        this.bytesDelivered += transfer.stop();
      };
      life.onCancel(stop);
      const cut = timeline.outageStartingIn(queue.now(), Number.POSITIVE_INFINITY);
      if (!cut) return;
      life.schedule(cut.fromMs, () => {
        if (ended) return;
        stop();
        if (cut.mode === 'hang') {
          handlers.onStall?.(queue.now(), null);
          life.schedule(cut.toMs, () => handlers.onError?.(queue.now()));
        } else {
          handlers.onError?.(queue.now());
        }
      });
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

interface Delivery {
  exchange: Exchange;
  handlers: ExchangeHandlers;
  timeline: ServerTimeline;
  plan: RequestPlan;
  sentAtMs: number;
  /** Delay of the head beyond the round trip: the server's time and the client's own. */
  serviceMs: number;
  clientBodyMs: number;
  pushed: readonly PushedValue[] | undefined;
  life: ExchangeLife;
}

/** The handlers, releasing the exchange's connection when it ends (complete or error). */
function releasing(handlers: ExchangeHandlers, release: () => void): ExchangeHandlers {
  return {
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
