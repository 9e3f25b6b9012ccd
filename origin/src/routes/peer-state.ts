/**
 * The pinger's endpoint (sync/pinger.ts), signed with the cluster secret:
 *
 *   POST /.well-known/webpp/peer/state/ping     header webpp-peer-state: the caller's load record
 *
 * Answers 204; the load records travel both ways in headers (http/peer-state-plugin.ts).
 */
import type { FastifyInstance } from 'fastify';
import { addClusterAuth } from '../http/cluster-auth-hooks.js';
import { PING_PATH } from '../sync/pinger.js';
import type { ResolvedOptions } from '../options.js';

export async function peerStateRoutes(app: FastifyInstance, { options }: { options: Pick<ResolvedOptions, 'clusterSecret' | 'publicUrl' | 'aliasUrls' | 'maxClockSkewMs'> }): Promise<void> {
  addClusterAuth(app, options, 1024);
  app.post(PING_PATH, { bodyLimit: 1024 }, async (_request, reply) => reply.code(204).send());
}
