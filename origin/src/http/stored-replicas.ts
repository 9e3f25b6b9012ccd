/**
 * Serves the replicas held in the replica store (serve-replica.ts). They take precedence
 * over the site's own routes, since a PUT may have updated them, so they are answered in
 * onRequest, before routing goes any further. The response still runs the onSend hooks of
 * the plugins registered around this one (kill switch, CORS, bindings header).
 */
import fp from 'fastify-plugin';
import type { FastifyInstance } from 'fastify';
import type { ReplicaStore } from '../replicas/replica-store.js';
import { isWellKnown, requestPath } from './request-paths.js';
import { serveReplica } from './serve-replica.js';
import { pathStep } from '../compose/path-hooks.js';

export interface StoredReplicasPluginOptions {
  store: ReplicaStore;
}

async function storedReplicasPlugin(app: FastifyInstance, { store }: StoredReplicasPluginOptions): Promise<void> {
  const step = pathStep(app, 'webpp-stored-replicas');
  step.addHook('onRequest', async (request, reply) => {
    if ((request.method !== 'GET' && request.method !== 'HEAD') || store.size === 0 || isWellKnown(request.url)) return;
    const path = requestPath(request.url);
    const replica = path === undefined ? undefined : store.get(path);
    if (replica === undefined) return;
    try {
      await serveReplica(request, reply, store, replica);
    } catch (error) {
      // The client went away after the headers (often right after the last byte): the
      // answer is over. Anything before the headers is a real error for Fastify to answer.
      if (!reply.raw.headersSent) throw error;
    }
    // A destroyed response is not "sent" for Fastify, which would go on to route the request
    // and answer it a second time (a logged 500): nothing else may answer it.
    if (!reply.sent) reply.hijack();
    return reply;
  });
}

export const webppStoredReplicas = fp(storedReplicasPlugin, {
  fastify: '5.x',
  name: 'webpp-stored-replicas',
  // Validators of injected pages must be stripped before a stored page is compared with them.
  dependencies: ['webpp-injected-etag'],
});
