/**
 * Load statistics (paper Section 5.2: policies replicate by load): every answered request
 * other than the origin's own endpoints is recorded with its body bytes and response time.
 */
import fp from 'fastify-plugin';
import type { FastifyInstance } from 'fastify';
import type { LoadStats } from '../stats/load-stats.js';
import { isWellKnown, pathWithoutQuery } from './request-paths.js';
import { pathStep } from '../compose/path-hooks.js';

export interface RecordLoadPluginOptions {
  stats: LoadStats;
}

async function recordLoadPlugin(app: FastifyInstance, { stats }: RecordLoadPluginOptions): Promise<void> {
  const step = pathStep(app, 'webpp-record-load');
  step.addHook('onResponse', async (request, reply) => {
    if (isWellKnown(request.url)) return;
    const length = Number(reply.getHeader('content-length') ?? 0) || 0;
    const bytes = request.method === 'HEAD' ? 0 : length;
    stats.record(pathWithoutQuery(request.url), bytes, reply.elapsedTime, sizeOf(reply.statusCode, length, reply.getHeader('content-range')));
  });
}

/**
 * The whole resource's size, when the answer tells it: a 200's Content-Length (a HEAD's too),
 * a 206's Content-Range total (RFC 9110 §14.4). Replication sizes a placement by it: the bytes
 * sent per request understate it when clients revalidate (304) or read ranges.
 */
function sizeOf(status: number, length: number, contentRange: unknown): number | undefined {
  if (status === 200) return length;
  if (status !== 206 || typeof contentRange !== 'string') return undefined;
  const total = /\/(\d{1,15})\s*$/.exec(contentRange)?.[1];
  return total === undefined ? undefined : Number(total);
}

export const webppRecordLoad = fp(recordLoadPlugin, { fastify: '5.x', name: 'webpp-record-load' });
