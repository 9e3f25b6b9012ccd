/**
 * Server push on every response (issue 13; Fei et al. 1998, Section 4): each response for
 * content is one service-time sample (arrival → response head, queueing included); every
 * response carries the value pushed last, `Server-Timing: webpp;dur=12.5;util=0.62` (`util`,
 * the busy share of the last full measurement interval, utilisation.ts), and the fresh values
 * of the peers, `webpp-load: "<origin>";dur=…;util=…;age=…, …` (docs/protocol.md).
 */
import fp from 'fastify-plugin';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { formatLoadHeader, formatServerTiming, LOAD_HEADER, SERVER_TIMING_HEADER } from '@webpp/core';
import { isWellKnown } from '../http/request-paths.js';
import type { PeerLoads } from './peer-loads.js';
import type { ServiceTimePush } from '@webpp/core';
import { pathStep } from '../compose/path-hooks.js';

export interface PushHeadersOptions {
  push: ServiceTimePush;
  peerLoads: PeerLoads;
  peerLoadMaxAgeMs: number;
  /** This server's utilisation of the last full interval (undefined before one closed). */
  utilisation: () => number | undefined;
  now?: () => number;
}

async function pushHeadersPlugin(app: FastifyInstance, options: PushHeadersOptions): Promise<void> {
  const { push, peerLoads, peerLoadMaxAgeMs, utilisation } = options;
  const now = options.now ?? Date.now;
  // Requests for content in flight, and those that arrived when none was: their samples
  // are the unloaded service time (core's ServiceTimePush).
  let inFlight = 0;
  const arrivedIdle = new WeakSet<FastifyRequest>();
  const step = pathStep(app, 'webpp-push-headers');
  step.addHook('onRequest', async (request, reply) => {
    if (isWellKnown(request.url) || request.method === 'OPTIONS') return;
    if (inFlight === 0) arrivedIdle.add(request);
    inFlight += 1;
    reply.raw.once('close', () => (inFlight -= 1));
  });
  step.addHook('onSend', async (request, reply, payload) => {
    const nowMs = now();
    // A 503 (a full queue) took no service: it is not a sample.
    if (!isWellKnown(request.url) && request.method !== 'OPTIONS' && reply.statusCode !== 503) push.record(reply.elapsedTime, nowMs, arrivedIdle.has(request));
    const current = push.current(nowMs);
    if (current !== undefined) {
      const existing = reply.getHeader(SERVER_TIMING_HEADER);
      const ours = formatServerTiming(current.serviceMs, utilisation());
      reply.header(SERVER_TIMING_HEADER, existing === undefined ? ours : `${String(existing)}, ${ours}`);
    }
    const loads = peerLoads.fresh(nowMs, peerLoadMaxAgeMs);
    if (loads.length > 0) reply.header(LOAD_HEADER, formatLoadHeader(loads));
    return payload;
  });
}

export const webppPushHeaders = fp(pushHeadersPlugin, { fastify: '5.x', name: 'webpp-push-headers' });
