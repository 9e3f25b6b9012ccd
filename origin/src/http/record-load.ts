/**
 * Load statistics (paper Section 5.2: policies replicate by load): every answered request
 * other than the origin's own endpoints is recorded with its body bytes and response time.
 */
import fp from 'fastify-plugin';
import type { FastifyInstance } from 'fastify';
import type { LoadStats } from '../stats/load-stats.js';
import { isWellKnown, pathWithoutQuery } from './request-paths.js';

export interface RecordLoadPluginOptions {
  stats: LoadStats;
}

async function recordLoadPlugin(app: FastifyInstance, { stats }: RecordLoadPluginOptions): Promise<void> {
  app.addHook('onResponse', async (request, reply) => {
    if (isWellKnown(request.url)) return;
    const bytes = request.method === 'HEAD' ? 0 : Number(reply.getHeader('content-length') ?? 0) || 0;
    stats.record(pathWithoutQuery(request.url), bytes, reply.elapsedTime);
  });
}

export const webppRecordLoad = fp(recordLoadPlugin, { fastify: '5.x', name: 'webpp-record-load' });
