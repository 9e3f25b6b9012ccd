/**
 * How an exchange's response arrives once the server has it (network.ts decides when it
 * leaves the browser and what the server does): the head after the round trip, then the
 * body — alone at the plan's bandwidth (the paper's model), or sharing the server's link
 * with the other bodies in flight (shared-link.ts) — with stalls, and cuts by outages.
 */
import { responseTiming, type RequestPlan, type ServerTimeline } from '@webpp/netem/model';
import type { EventQueue, TimerHandle } from './event-queue.js';
import type { Exchange, ExchangeHandlers } from './network.js';
import type { PushedValue } from './server-queue.js';
import type { SharedLink } from './shared-link.js';

/** The timers and clean-ups of one exchange, all dropped when it is cancelled. */
export class ExchangeLife {
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

export interface Delivery {
  queue: EventQueue;
  /** Counts body bytes that crossed the link. */
  addBytes(bytes: number): void;
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

/** An outage that starts before the head: reset at its start, or frozen until its end. */
function cutBeforeHead(delivery: Delivery, firstByteAtMs: number): boolean {
  const { timeline, sentAtMs, life, handlers } = delivery;
  const cut = timeline.outageStartingIn(sentAtMs, firstByteAtMs);
  if (!cut) return false;
  if (cut.mode === 'hang') {
    life.schedule(cut.fromMs, () => handlers.onStall?.(delivery.queue.now(), null));
    life.schedule(cut.toMs, () => handlers.onError?.(delivery.queue.now()));
  } else {
    life.schedule(cut.fromMs, () => handlers.onError?.(delivery.queue.now()));
  }
  return true;
}

/**
 * Each body has the whole bandwidth (the paper's model). Schedules the head, the body,
 * stalls and cuts of an exchange. `serviceMs` delays the head; `clientBodyMs` delays only
 * the completion the client sees (the last byte has left the link, so an outage starting
 * meanwhile does not cut it).
 */
export function deliverAlone(delivery: Delivery): void {
  const { exchange, handlers, timeline, plan, sentAtMs, serviceMs, clientBodyMs, pushed, life } = delivery;
  const queue = delivery.queue;
  const bodyBytes = exchange.method === 'HEAD' ? 0 : exchange.bodyBytes;
  const timing = responseTiming(plan, bodyBytes, serviceMs);
  const firstByteAtMs = sentAtMs + timing.firstByteMs;
  const completeAtMs = sentAtMs + timing.completeMs;
  if (cutBeforeHead(delivery, firstByteAtMs)) return;
  const cut = timeline.outageStartingIn(sentAtMs, completeAtMs);
  // Bytes delivered by tMs, at the plan's pace (stalls ignored): for cancelled and cut bodies.
  const bytesBy = (tMs: number): number =>
    plan.bandwidthBytesPerSec === null ? bodyBytes : Math.min(bodyBytes, Math.max(0, ((tMs - firstByteAtMs) * plan.bandwidthBytesPerSec) / 1000));
  let counted = false;
  const count = (bytes: number): void => {
    if (counted) return;
    counted = true;
    delivery.addBytes(bytes);
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
export function deliverShared(delivery: Delivery, link: SharedLink): void {
  const { exchange, handlers, timeline, plan, sentAtMs, serviceMs, clientBodyMs, pushed, life } = delivery;
  const queue = delivery.queue;
  const bodyBytes = exchange.method === 'HEAD' ? 0 : exchange.bodyBytes;
  const firstByteAtMs = sentAtMs + responseTiming(plan, 0, serviceMs).firstByteMs;
  if (cutBeforeHead(delivery, firstByteAtMs)) return;
  life.schedule(firstByteAtMs, () => {
    handlers.onFirstByte?.(queue.now(), pushed);
    if (life.cancelled) return;
    let ended = false;
    const bodyStalls = plan.stallPhase === 'body' && plan.stallMs > 0;
    const transfer = link.start({
      bodyBytes,
      stallAfterBytes: bodyStalls ? plan.stallAfterFraction * bodyBytes : bodyBytes,
      stallMs: bodyStalls ? plan.stallMs : 0,
      onStall: (atMs, resumesAtMs) => handlers.onStall?.(atMs, resumesAtMs),
      onComplete: (atMs) => {
        ended = true;
        delivery.addBytes(bodyBytes);
        life.schedule(atMs + clientBodyMs, () => handlers.onComplete?.(queue.now()));
      },
    });
    const stop = (): void => {
      if (ended) return;
      ended = true;
      delivery.addBytes(transfer.stop());
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

