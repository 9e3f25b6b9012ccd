/**
 * One origin of the replication bench with a real, finite capacity: the origin's own
 * concurrency gate (`maxConcurrentRequests` + `maxQueuedRequests`, origin/src/http/
 * concurrency-gate.ts) serves at most `slots` requests for content at once, the rest wait in
 * its FIFO queue, and every request for content holds its slot for `serviceMs` of emulated
 * work (a worker thread busy for a fixed time per request, as DCWS's servers had 12 worker
 * threads each). The work is done in onSend, so that it also applies to the replicas the
 * origin answers before any route (stored and lazily fetched automatic replicas). Peer calls
 * (/.well-known/webpp/) never queue and cost no work, so that the servers' own coordination
 * does not compete with clients. Composed like startReplicaServer (origin/src/server.ts):
 * Fastify, webppOrigin, @fastify/static over the server's own folder.
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

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

export async function startCapacityOrigin(
  port: number,
  root: string,
  capacity: CapacityOptions,
  origin: Omit<WebppOriginOptions, 'publicUrl'>,
): Promise<CapacityOrigin> {
  const url = `http://127.0.0.1:${port}`;
  const app = Fastify({ logger: false }) as unknown as FastifyInstance;
  // The work, while the request holds its slot (the gate releases it when the response closes).
  // A refused request (503, the queue was full) did no work.
  app.addHook('onSend', async (request, reply, payload) => {
    if (!request.url.startsWith('/.well-known/webpp/') && reply.statusCode !== 503) await sleep(capacity.serviceMs);
    return payload;
  });
  await app.register(webppOrigin, {
    contentRoot: root,
    ...origin,
    publicUrl: url,
    maxConcurrentRequests: capacity.slots,
    maxQueuedRequests: capacity.maxQueued,
  });
  await app.register(fastifyStatic, { root, index: ['index.html'] });
  await app.listen({ port, host: '127.0.0.1' });
  const concurrency = (): { queued: number; refusedTotal: number } | null | undefined => app.webpp.gauges().push?.concurrency;
  return {
    url,
    app,
    refused: () => concurrency()?.refusedTotal ?? 0,
    queued: () => concurrency()?.queued ?? 0,
    close: () => app.close(),
  };
}
