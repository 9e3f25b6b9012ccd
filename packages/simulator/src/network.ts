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
 */
import { createRandom, meanOf, planRequest, responseTiming, type ServerTimeline } from '@webpp/netem/model';
import type { EventQueue, TimerHandle } from './event-queue.js';
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
   */
  onFirstByte?(atMs: number, pushed?: readonly PushedValue[]): void;
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
}

export class SimulatedNetwork {
  readonly counts: ExchangeCounts = emptyCounts();
  private readonly queue: EventQueue;
  private readonly servers: ReadonlyMap<string, ServerTimeline>;
  private readonly seed: string | number;
  private readonly serviceMs: number;
  readonly queues: ServerQueues | undefined;
  private readonly clientDelay: ClientDelay | undefined;

  constructor(options: SimulatedNetworkOptions) {
    this.queue = options.queue;
    this.servers = options.servers;
    this.seed = options.seed;
    this.serviceMs = options.serviceMs ?? 0;
    this.queues = options.queues;
    this.clientDelay = options.clientDelay;
  }

  serverNames(): string[] {
    return [...this.servers.keys()];
  }

  /**
   * What an all-knowing observer would expect a GET of `bodyBytes` to `server` to take if
   * sent now: mean delay + service + mean first-byte stall share + transfer time; Infinity
   * while the server is down. Only the oracle policy may look.
   */
  expectedResponseMs(server: string, bodyBytes: number): number {
    const timeline = this.servers.get(server);
    if (!timeline) throw new RangeError(`unknown server "${server}"`);
    const nowMs = this.queue.now();
    if (timeline.outageAt(nowMs)) return Number.POSITIVE_INFINITY;
    const link = timeline.linkAt(nowMs);
    const stallMs = link.stall ? link.stall.probability * meanOf(link.stall.durationMs) : 0;
    const transferMs = link.bandwidthBytesPerSec ? (bodyBytes / link.bandwidthBytesPerSec) * 1000 : 0;
    return meanOf(link.delayMs) + this.serviceMs + stallMs + transferMs;
  }

  send(exchange: Exchange, handlers: ExchangeHandlers): ExchangeHandle {
    const timeline = this.servers.get(exchange.server);
    if (!timeline) throw new RangeError(`unknown server "${exchange.server}"`);
    const queue = this.queue;
    const sentAtMs = queue.now();
    this.counts[exchange.purpose]++;
    // At most four timers per exchange; cancelling marks them so the queue skips them.
    const timers: TimerHandle[] = [];
    let cancelled = false;
    const schedule = (atMs: number, run: () => void): void => {
      if (!cancelled) timers.push(queue.at(atMs, run));
    };
    const handle: ExchangeHandle = {
      sentAtMs,
      cancel: () => {
        cancelled = true;
        for (const timer of timers) queue.cancel(timer);
      },
    };

    const down = timeline.outageAt(sentAtMs);
    if (down) {
      // Refused/reset at once; a black hole answers only with a reset when it ends.
      schedule(down.mode === 'hang' ? down.toMs : sentAtMs, () => handlers.onError?.(queue.now()));
      return handle;
    }

    const plan = planRequest(timeline.linkAt(sentAtMs), createRandom(this.seed, exchange.server, exchange.key));
    // The client's own time (client-delay.ts): before the head, and after the body left the link (GETs only).
    const client = this.clientDelay?.at(sentAtMs) ?? { firstByteMs: 0, bodyMs: 0 };
    const clientBodyMs = exchange.method === 'HEAD' ? 0 : client.bodyMs;
    const serverQueue = this.queues?.get(exchange.server);
    if (serverQueue === undefined) {
      this.deliver(exchange, handlers, timeline, plan, sentAtMs, this.serviceMs + client.firstByteMs, clientBodyMs, undefined, schedule);
      return handle;
    }
    // Half the round trip on the way in; then the server's queue (it serves even what the client has cancelled since).
    queue.at(sentAtMs + plan.delayMs / 2, () => {
      const inServerMs = serverQueue.admit(queue.now());
      const pushed = this.queues?.carriedBy(exchange.server, queue.now());
      this.deliver(exchange, handlers, timeline, plan, sentAtMs, inServerMs + client.firstByteMs, clientBodyMs, pushed, schedule);
    });
    return handle;
  }

  /**
   * Schedules the head, the body, stalls and cuts of an exchange sent at sentAtMs. `serviceMs`
   * delays the head; `clientBodyMs` delays only the completion the client sees (the last byte
   * has left the link, so an outage starting meanwhile does not cut it).
   */
  private deliver(
    exchange: Exchange,
    handlers: ExchangeHandlers,
    timeline: ServerTimeline,
    plan: ReturnType<typeof planRequest>,
    sentAtMs: number,
    serviceMs: number,
    clientBodyMs: number,
    pushed: readonly PushedValue[] | undefined,
    schedule: (atMs: number, run: () => void) => void,
  ): void {
    const queue = this.queue;
    const timing = responseTiming(plan, exchange.method === 'HEAD' ? 0 : exchange.bodyBytes, serviceMs);
    const firstByteAtMs = sentAtMs + timing.firstByteMs;
    const completeAtMs = sentAtMs + timing.completeMs;
    const cut = timeline.outageStartingIn(sentAtMs, completeAtMs);
    if (cut && cut.fromMs <= firstByteAtMs) {
      if (cut.mode === 'hang') {
        schedule(cut.fromMs, () => handlers.onStall?.(queue.now(), null));
        schedule(cut.toMs, () => handlers.onError?.(queue.now()));
      } else {
        schedule(cut.fromMs, () => handlers.onError?.(queue.now()));
      }
      return;
    }
    schedule(firstByteAtMs, () => handlers.onFirstByte?.(queue.now(), pushed));
    const bodyStallAtMs = firstByteAtMs + (completeAtMs - firstByteAtMs - (plan.stallPhase === 'body' ? plan.stallMs : 0)) * plan.stallAfterFraction;
    if (plan.stallPhase === 'body' && plan.stallMs > 0 && (!cut || bodyStallAtMs < cut.fromMs)) {
      schedule(bodyStallAtMs, () => handlers.onStall?.(queue.now(), bodyStallAtMs + plan.stallMs));
    }
    if (cut) {
      // Cut off in the middle of the body: reset at once, or frozen until the outage ends.
      if (cut.mode === 'hang') {
        schedule(cut.fromMs, () => handlers.onStall?.(queue.now(), null));
        schedule(cut.toMs, () => handlers.onError?.(queue.now()));
      } else {
        schedule(cut.fromMs, () => handlers.onError?.(queue.now()));
      }
    } else {
      schedule(completeAtMs + clientBodyMs, () => handlers.onComplete?.(queue.now()));
    }
  }
}
