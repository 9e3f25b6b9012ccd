/**
 * One origin of the replication bench with a real, finite capacity: at most `slots`
 * requests for content are served at once, each holding its slot for `serviceMs` before it
 * is answered (a worker thread busy for a fixed time per request, as DCWS's servers had 12
 * worker threads each); the rest wait in a FIFO queue. Peer calls (/.well-known/webpp/) pass
 * the gate, so that the servers' own coordination does not compete with clients.
 * Composed like startReplicaServer (origin/src/server.ts): Fastify, the gate's hook first,
 * webppOrigin, @fastify/static over the server's own folder.
 */
import Fastify, { type FastifyInstance } from 'fastify';
import fastifyStatic from '@fastify/static';
import { webppOrigin, type WebppOriginOptions } from '@webpp/origin';

export interface CapacityOptions {
  slots: number;
  serviceMs: number;
  /** Requests waiting beyond this are answered 503 at once (never reached in the bench: it counts them). */
  maxQueued: number;
}

export interface CapacityOrigin {
  url: string;
  app: FastifyInstance;
  /** Requests refused for a full queue. */
  refused(): number;
  /** Requests waiting now. */
  queued(): number;
  close(): Promise<void>;
}

class CapacityGate {
  private active = 0;
  private readonly waiting: (() => void)[] = [];
  refused = 0;

  constructor(private readonly options: CapacityOptions) {}

  get queued(): number {
    return this.waiting.length;
  }

  /** Resolves with a release function once a slot is free; undefined when the queue is full. */
  async acquire(): Promise<(() => void) | undefined> {
    if (this.active >= this.options.slots) {
      if (this.waiting.length >= this.options.maxQueued) {
        this.refused += 1;
        return undefined;
      }
      await new Promise<void>((resolve) => this.waiting.push(resolve));
    } else this.active += 1;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const next = this.waiting.shift();
      if (next === undefined) this.active -= 1;
      else next(); // the slot passes to the next in line
    };
  }
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

export async function startCapacityOrigin(
  port: number,
  root: string,
  capacity: CapacityOptions,
  origin: Omit<WebppOriginOptions, 'publicUrl'>,
): Promise<CapacityOrigin> {
  const url = `http://127.0.0.1:${port}`;
  const gate = new CapacityGate(capacity);
  const app = Fastify({ logger: false }) as unknown as FastifyInstance;
  app.addHook('onRequest', async (request, reply) => {
    if (request.url.startsWith('/.well-known/webpp/')) return;
    // A client may give up while it waits (a cancelled hedge, a timeout): its slot must come back.
    let closed = false;
    let release: (() => void) | undefined;
    reply.raw.once('close', () => {
      closed = true;
      release?.();
    });
    release = await gate.acquire();
    if (release === undefined) return reply.code(503).header('retry-after', '1').send({ code: 'BENCH_QUEUE_FULL' });
    if (closed) release();
    else await sleep(capacity.serviceMs);
    return undefined;
  });
  await app.register(webppOrigin, { contentRoot: root, ...origin, publicUrl: url });
  await app.register(fastifyStatic, { root, index: ['index.html'] });
  await app.listen({ port, host: '127.0.0.1' });
  return {
    url,
    app,
    refused: () => gate.refused,
    queued: () => gate.queued,
    close: () => app.close(),
  };
}
