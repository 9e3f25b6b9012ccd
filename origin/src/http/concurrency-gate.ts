/**
 * A finite capacity (issue 13): at most `maxConcurrentRequests` requests for content are
 * served at once; the others wait in a FIFO queue of at most `maxQueuedRequests`, and the
 * rest are refused with 503 WEBPP_ERR_OVERLOADED and `Retry-After: 1`. A request holds its
 * slot from its arrival until its response has been through every onSend hook (the
 * server's work: route, pre-processing, bindings) and is handed to the connection, or until
 * its connection closes, so the queue grows with the load a server receives, as a
 * multi-server FIFO queue (M/G/c) does; the wait is part of the service time the server
 * pushes (core's push/service-time.ts). The body's transfer does not hold a slot: a client
 * that reads slowly (a slowloris on the response side) would otherwise keep every slot for
 * as long as it likes. The origin's own endpoints (peer sync, statistics, management)
 * never queue.
 *
 * Two plugins: `webppConcurrencyGate` (onRequest, registered first) takes the slot and
 * `webppConcurrencyGateRelease` (onSend, registered after webpp's other onSend hooks) gives
 * it back.
 */
import fp from 'fastify-plugin';
import type { FastifyInstance } from 'fastify';
import { WEBPP_ERR_OVERLOADED } from '../errors.js';
import { isWellKnown } from './request-paths.js';
import { pathStep } from '../compose/path-hooks.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** Gives this request's slot back (once; null: it holds none). */
    webppReleaseSlot: (() => void) | null;
  }
}

export interface ConcurrencyGateOptions {
  /** 0: no limit (the plugin does nothing). */
  maxConcurrentRequests: number;
  maxQueuedRequests: number;
}

/** The slots and the FIFO queue; counts for the statistics. */
export class ConcurrencyGate {
  active = 0;
  private readonly waiting: Array<() => void> = [];
  /** Requests that had to wait, and requests refused because the queue was full. */
  queuedTotal = 0;
  refusedTotal = 0;

  constructor(private readonly options: ConcurrencyGateOptions) {}

  get queued(): number {
    return this.waiting.length;
  }

  /** Gives the slot to the first waiting request, or frees it. */
  release(): void {
    const next = this.waiting.shift();
    if (next) next();
    else this.active = Math.max(0, this.active - 1);
  }

  /**
   * A slot: `ready` undefined = held at once, else resolves when it is handed over. `cancel`
   * takes a waiting request out of the queue; false = it was already handed a slot (release it).
   * @throws WEBPP_ERR_OVERLOADED when the queue is full.
   */
  acquire(): { ready: Promise<void> | undefined; cancel: () => boolean } {
    if (this.active < this.options.maxConcurrentRequests) {
      this.active += 1;
      return { ready: undefined, cancel: () => false };
    }
    if (this.waiting.length >= this.options.maxQueuedRequests) {
      this.refusedTotal += 1;
      throw new WEBPP_ERR_OVERLOADED(this.waiting.length);
    }
    this.queuedTotal += 1;
    let waiter: () => void = () => undefined;
    const ready = new Promise<void>((resolve) => {
      waiter = resolve;
      this.waiting.push(resolve);
    });
    return {
      ready,
      cancel: () => {
        const index = this.waiting.indexOf(waiter);
        if (index < 0) return false;
        this.waiting.splice(index, 1);
        return true;
      },
    };
  }
}

async function concurrencyGatePlugin(app: FastifyInstance, { gate }: { gate: ConcurrencyGate | undefined }): Promise<void> {
  if (gate === undefined) return;
  app.decorateRequest('webppReleaseSlot', null);
  pathStep(app, 'webpp-concurrency-gate').addHook('onRequest', async (request, reply) => {
    if (isWellKnown(request.url)) return;
    let ticket: ReturnType<ConcurrencyGate['acquire']>;
    try {
      ticket = gate.acquire();
    } catch (error) {
      reply.header('retry-after', '1');
      throw error;
    }
    // Given back after the last onSend hook, or on 'close' (the connection went away, also
    // while queued; a queued request that was handed its slot just before closing gives it back).
    let held = true;
    const releaseSlot = (): void => {
      if (!held) return;
      held = false;
      request.webppReleaseSlot = null;
      if (!ticket.cancel()) gate.release();
    };
    request.webppReleaseSlot = releaseSlot;
    reply.raw.once('close', releaseSlot);
    if (ticket.ready !== undefined) await ticket.ready;
  });
}

async function concurrencyGateReleasePlugin(app: FastifyInstance, { gate }: { gate: ConcurrencyGate | undefined }): Promise<void> {
  if (gate === undefined) return;
  pathStep(app, 'webpp-concurrency-gate-release').addHook('onSend', async (request, _reply, payload) => {
    // Requests of contexts made before the gate decorated the request have no slot (undefined).
    (request.webppReleaseSlot as (() => void) | null | undefined)?.();
    return payload;
  });
}

export const webppConcurrencyGate = fp(concurrencyGatePlugin, { fastify: '5.x', name: 'webpp-concurrency-gate' });
export const webppConcurrencyGateRelease = fp(concurrencyGateReleasePlugin, { fastify: '5.x', name: 'webpp-concurrency-gate-release', dependencies: ['webpp-concurrency-gate'] });
