/**
 * The worker's driver of @webpp/core's client engine: real timers and fetch(). The engine
 * decides (plan, timeouts, hedges, failover, deadline, fallback); this file only sends. Each
 * run carries an ExchangeSender: how that run's exchanges become Requests (the page's
 * request rebuilt per replica, the rest of a broken body, a refresh HEAD) and which fetch
 * sends them (plain fetch, or Workbox's handler.fetch so plugins run).
 *
 * Heads carry no ttfbMs: the worker measures its samples itself, from Resource Timing
 * (ttfb-sampler.ts), and reports them to the engine when they are in. The time fetch()
 * took is only kept for the decision records (elapsedMs).
 */
import type { Cancel, EngineIO, Exchange, ExchangeEvents } from '@webpp/core';
import { timerQueue } from './timer-queue.js';

export interface ExchangeSender {
  /** Builds the physical request of an exchange; a throw fails the exchange like a dead server. */
  build(exchange: Exchange, signal: AbortSignal): Request;
  fetch(request: Request): Promise<Response>;
  /**
   * Every response that arrived, also for an exchange the engine no longer waits for (it
   * still tells something about its server), with the physical request that got it: `elapsedMs` is fetch() → headers and
   * `sentAtMs` the performance.now() reading just before fetch() was called.
   */
  onResponse?(exchange: Exchange, response: Response, elapsedMs: number, sentAtMs: number, request: Request): void;
  /** The head of an exchange the engine still waits for, after the engine heard of it (engine-hooks.ts). */
  headArrived?(exchange: Exchange, request: Request, response: Response, events: ExchangeEvents<Response>): void;
}

const CANCELLED = 'webpp-cancelled';

/** Sends one exchange with `sender`; the engine's events follow. */
function sendWith(sender: ExchangeSender, exchange: Exchange, events: ExchangeEvents<Response>): Cancel {
  const controller = new AbortController();
  let cancelled = false;
  let request: Request;
  try {
    request = sender.build(exchange, controller.signal);
  } catch (error) {
    // A physical URL the platform refuses (e.g. a forbidden port) fails like a dead server.
    events.error(String(error));
    return () => undefined;
  }
  const sentAtMs = performance.now();
  sender.fetch(request).then(
    (response) => {
      const elapsedMs = performance.now() - sentAtMs;
      sender.onResponse?.(exchange, response, elapsedMs, sentAtMs, request);
      if (cancelled) return void response.body?.cancel().catch(() => undefined);
      events.head({ status: response.status, served: response.type === 'opaqueredirect', elapsedMs, response });
      sender.headArrived?.(exchange, request, response, events);
      // A ranged background GET ends with its body: read it here and say so, or the engine
      // would wait for it until its timeout and count a live server as failed.
      if (exchange.method === 'range' && response.status < 500) {
        response.arrayBuffer().then(
          (body) => {
            if (!cancelled) events.bodyComplete({ bodyBytes: body.byteLength });
          },
          (error: unknown) => {
            if (!cancelled) events.error(error instanceof Error ? `${error.name}: ${error.message}` : String(error));
          },
        );
      }
    },
    (error: unknown) => {
      if (!cancelled) events.error(error instanceof Error ? `${error.name}: ${error.message}` : String(error));
    },
  );
  return () => {
    if (cancelled) return;
    cancelled = true;
    controller.abort(CANCELLED);
  };
}

/**
 * The engine's IO in the worker. `now` is the engine's (and the policy's) clock: Date.now(),
 * because the latency table outlives the worker in IndexedDB. Runs pass their sender as the
 * run context; background requests (no context) use `background`.
 */
export function fetchIO(background: ExchangeSender, now: () => number = Date.now): EngineIO<Response, ExchangeSender> {
  return {
    now,
    // One native timer for every attempt's timeout, hedge and deadline (timer-queue.ts).
    setTimer: timerQueue({ now }),
    send: (exchange, events, sender) => sendWith(sender ?? background, exchange, events),
    discard: (response) => void response.body?.cancel().catch(() => undefined),
  };
}
