/**
 * The peer endpoint of the pushed-service-time exchange (peer-load-message.ts), signed with
 * the cluster secret like every server-to-server call (http/cluster-auth-hooks.ts).
 */
import type { FastifyInstance } from 'fastify';
import { addClusterAuth, signedBodyOf } from '../http/cluster-auth-hooks.js';
import type { ResolvedOptions } from '../options.js';
import { MAX_PEER_LOAD_BYTES, PEER_LOAD_PATH, parsePeerLoadMessage, type PeerLoadMessage } from './peer-load-message.js';
import type { PeerLoads } from './peer-loads.js';

export interface PeerLoadRoutesOptions {
  options: ResolvedOptions;
  peerLoads: PeerLoads;
  /** This server's own message now (undefined before its first request). */
  ownMessage: () => PeerLoadMessage | undefined;
}

export async function peerLoadRoutes(app: FastifyInstance, { options, peerLoads, ownMessage }: PeerLoadRoutesOptions): Promise<void> {
  addClusterAuth(app, options, MAX_PEER_LOAD_BYTES);
  app.post(PEER_LOAD_PATH, { bodyLimit: MAX_PEER_LOAD_BYTES }, async (request, reply) => {
    peerLoads.learn(parsePeerLoadMessage(signedBodyOf(request)), Date.now());
    reply.header('cache-control', 'no-store');
    const own = ownMessage();
    if (own === undefined) return reply.code(204).send();
    return own;
  });
}
