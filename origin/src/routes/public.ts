/**
 * Read-only endpoints:
 *
 *   GET /.well-known/webpp/resolve?url=<logical URL or path>   name service (paper Section 5.2), CORS
 *   GET /.well-known/webpp/directory                           the whole directory as JSON, CORS
 *   GET /.well-known/webpp/health                              liveness, directory version, peer status
 *   GET /.well-known/webpp/stats[?format=prometheus]           load statistics (admin token unless publicStats)
 *   GET /.well-known/webpp/metrics                             the same, Prometheus text format
 *   GET /webpp.js, /webpp-sw.js (+ .map)                       the client scripts
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { WEBPP_ERR_BAD_URL, WEBPP_ERR_CLIENT_BUNDLE_MISSING } from '../errors.js';
import { canonicalUrl } from '@webpp/core';
import { PAGE_SCRIPT_FILE, WORKER_SCRIPT_FILE } from '../client-scripts.js';
import { PROMETHEUS_CONTENT_TYPE, toPrometheus } from '../stats/prometheus.js';
import { requireAdmin } from './management.js';
import { WELL_KNOWN_PREFIX, type WebppOrigin } from '../state.js';

export const RESOLVE_PATH = `${WELL_KNOWN_PREFIX}resolve`;
export const HEALTH_PATH = `${WELL_KNOWN_PREFIX}health`;
export const STATS_PATH = `${WELL_KNOWN_PREFIX}stats`;
export const METRICS_PATH = `${WELL_KNOWN_PREFIX}metrics`;
export const DIRECTORY_LISTING_PATH = `${WELL_KNOWN_PREFIX}directory`;

function publicCors(reply: FastifyReply): void {
  reply.header('access-control-allow-origin', '*').header('timing-allow-origin', '*');
}

export async function publicRoutes(app: FastifyInstance, state: WebppOrigin): Promise<void> {
  app.get<{ Querystring: { url: string } }>(
    RESOLVE_PATH,
    {
      schema: {
        querystring: {
          type: 'object',
          required: ['url'],
          properties: { url: { type: 'string', minLength: 1, maxLength: 8192 } },
        },
      },
    },
    async (request, reply) => {
      publicCors(reply);
      reply.header('cache-control', 'no-cache');
      const url = canonicalUrl(request.query.url, state.options.logicalOrigin);
      if (url === undefined) throw new WEBPP_ERR_BAD_URL(`${JSON.stringify(request.query.url.slice(0, 200))} is not an http(s) URL or path`);
      const match = state.directory.lookup(url);
      const directoryVersion = state.directory.version;
      if (match === undefined) {
        reply.code(404);
        return { url, replicated: false, physicalUrls: [], directoryVersion };
      }
      return {
        url,
        replicated: true,
        physicalUrls: match.physicalUrls,
        entry: match.binding.prefix ? `${match.binding.logical}*` : match.binding.logical,
        prefix: match.binding.prefix,
        directoryVersion,
      };
    },
  );

  app.get(DIRECTORY_LISTING_PATH, async (_request, reply) => {
    publicCors(reply);
    reply.header('cache-control', 'no-cache');
    return state.directory.toJSON();
  });

  app.get(HEALTH_PATH, async (_request, reply) => {
    publicCors(reply);
    reply.header('cache-control', 'no-store');
    return {
      ok: true,
      publicUrl: state.options.publicUrl,
      logicalOrigin: state.options.logicalOrigin,
      directoryVersion: state.directory.version,
      directoryPairs: state.directory.size,
      storedReplicas: state.store.size,
      killSwitch: state.killSwitch,
      peers: state.sync?.peerStatus() ?? [],
      pendingUpdatePushes: state.replicas.pendingPushes,
    };
  });

  const statsAuth = state.options.publicStats ? undefined : requireAdmin(state, 'Statistics');
  const statsHandler = (format: 'json' | 'prometheus' | 'query') =>
    async (request: FastifyRequest<{ Querystring: { format?: string } }>, reply: FastifyReply) => {
      if (statsAuth !== undefined) await statsAuth(request);
      else publicCors(reply);
      reply.header('cache-control', 'no-store');
      const wanted = format === 'query' ? (request.query.format === 'prometheus' ? 'prometheus' : 'json') : format;
      const load = state.stats.snapshot();
      if (wanted === 'prometheus') {
        reply.header('content-type', PROMETHEUS_CONTENT_TYPE);
        return toPrometheus(load, state.gauges());
      }
      return { ...load, origin: state.gauges() };
    };
  app.get(STATS_PATH, statsHandler('query'));
  app.get(METRICS_PATH, statsHandler('prometheus'));

  if (state.options.serveClientScripts) {
    const serve = (file: string, contentType: string) => async (request: FastifyRequest, reply: FastifyReply) => {
      const result = await state.clientScripts.read(file);
      if (!result.ok) throw new WEBPP_ERR_CLIENT_BUNDLE_MISSING(result.message);
      reply
        .header('content-type', contentType)
        .header('cache-control', 'no-cache')
        .header('service-worker-allowed', '/')
        .header('etag', result.etag);
      if (request.headers['if-none-match']?.split(',').some((tag) => tag.trim() === result.etag) === true) {
        return reply.code(304).send();
      }
      return result.body;
    };
    const { scriptPath, workerPath } = state.options;
    app.get(scriptPath, serve(PAGE_SCRIPT_FILE, 'text/javascript; charset=utf-8'));
    app.get(workerPath, serve(WORKER_SCRIPT_FILE, 'text/javascript; charset=utf-8'));
    app.get(`${scriptPath}.map`, serve(`${PAGE_SCRIPT_FILE}.map`, 'application/json; charset=utf-8'));
    app.get(`${workerPath}.map`, serve(`${WORKER_SCRIPT_FILE}.map`, 'application/json; charset=utf-8'));
  }
}
