/**
 * Read-only endpoints:
 *
 *   GET /.well-known/webpp/resolve?url=<logical URL or path>   name service (paper Section 5.2), CORS
 *   GET /.well-known/webpp/directory                           the whole directory as JSON, CORS
 *   GET /.well-known/webpp/health                              liveness, directory version, peer status
 *   GET /.well-known/webpp/stats[?format=prometheus]           load statistics (admin token unless publicStats)
 *   GET /.well-known/webpp/metrics                             the same, Prometheus text format
 *   GET /webpp.js, /webpp-sw.js, /webpp-sw-<add-on>.js (+ .map)  the client scripts
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { WEBPP_ERR_BAD_URL, WEBPP_ERR_CLIENT_BUNDLE_MISSING } from '../errors.js';
import { isNotModified } from '../http/conditional.js';
import { canonicalUrl } from '@webpp/core';
import { PAGE_SCRIPT_FILE, WORKER_ADDON_FILES, WORKER_SCRIPT_FILE, workerAddonPath } from '../client-scripts.js';
import { PROMETHEUS_CONTENT_TYPE, toPrometheus } from '../stats/prometheus.js';
import { requireAdmin } from './management.js';
import type { ClientScripts } from '../client-scripts.js';
import type { ReplicationDirectory } from '../directory/replication-directory.js';
import type { KillSwitch } from '../http/kill-switch.js';
import type { ResolvedOptions } from '../options.js';
import type { ReplicaManager } from '../replicas/replica-manager.js';
import type { ReplicaStore } from '../replicas/replica-store.js';
import { WELL_KNOWN_PREFIX } from '@webpp/core';
import type { LoadStats } from '../stats/load-stats.js';
import type { OriginGauges } from '../stats/prometheus.js';
import type { PeerSync } from '../sync/peer-sync.js';

export const RESOLVE_PATH = `${WELL_KNOWN_PREFIX}resolve`;
export const HEALTH_PATH = `${WELL_KNOWN_PREFIX}health`;
export const STATS_PATH = `${WELL_KNOWN_PREFIX}stats`;
export const METRICS_PATH = `${WELL_KNOWN_PREFIX}metrics`;
export const DIRECTORY_LISTING_PATH = `${WELL_KNOWN_PREFIX}directory`;

function publicCors(reply: FastifyReply): void {
  reply.header('access-control-allow-origin', '*').header('timing-allow-origin', '*');
}

export interface PublicRoutesOptions {
  options: ResolvedOptions;
  directory: ReplicationDirectory;
  store: ReplicaStore;
  replicas: ReplicaManager;
  stats: LoadStats;
  killSwitch: KillSwitch;
  sync: PeerSync | undefined;
  clientScripts: ClientScripts;
  gauges: () => OriginGauges;
}

export async function publicRoutes(app: FastifyInstance, deps: PublicRoutesOptions): Promise<void> {
  const { options, directory } = deps;
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
      // A missing, empty or oversized url is the documented WEBPP_ERR_BAD_URL, with CORS (not FST_ERR_VALIDATION).
      attachValidation: true,
    },
    async (request, reply) => {
      publicCors(reply);
      reply.header('cache-control', 'no-cache');
      if (request.validationError !== undefined) throw new WEBPP_ERR_BAD_URL(`the url query parameter is missing, empty or longer than 8192 characters`);
      const url = canonicalUrl(request.query.url, options.logicalOrigin);
      if (url === undefined) throw new WEBPP_ERR_BAD_URL(`${JSON.stringify(request.query.url.slice(0, 200))} is not an http(s) URL or path`);
      const match = directory.lookup(url);
      const directoryVersion = directory.version;
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
    return directory.toJSON();
  });

  app.get(HEALTH_PATH, async (_request, reply) => {
    publicCors(reply);
    reply.header('cache-control', 'no-store');
    return {
      ok: true,
      publicUrl: options.publicUrl,
      logicalOrigin: options.logicalOrigin,
      directoryVersion: directory.version,
      directoryPairs: directory.size,
      storedReplicas: deps.store.size,
      killSwitch: deps.killSwitch.on,
      peers: deps.sync?.peerStatus() ?? [],
      pendingUpdatePushes: deps.replicas.pendingPushes,
    };
  });

  const statsAuth = options.publicStats ? undefined : requireAdmin(options.adminToken, 'Statistics');
  const statsHandler = (format: 'json' | 'prometheus' | 'query') =>
    async (request: FastifyRequest<{ Querystring: { format?: string } }>, reply: FastifyReply) => {
      if (statsAuth !== undefined) await statsAuth(request);
      else publicCors(reply);
      reply.header('cache-control', 'no-store');
      const wanted = format === 'query' ? (request.query.format === 'prometheus' ? 'prometheus' : 'json') : format;
      const load = deps.stats.snapshot();
      if (wanted === 'prometheus') {
        reply.header('content-type', PROMETHEUS_CONTENT_TYPE);
        return toPrometheus(load, deps.gauges());
      }
      return { ...load, origin: deps.gauges() };
    };
  app.get(STATS_PATH, statsHandler('query'));
  app.get(METRICS_PATH, statsHandler('prometheus'));

  if (options.serveClientScripts) {
    const serve = (file: string, contentType: string) => async (request: FastifyRequest, reply: FastifyReply) => {
      const result = await deps.clientScripts.read(file);
      if (!result.ok) throw new WEBPP_ERR_CLIENT_BUNDLE_MISSING(result.message);
      reply
        .header('content-type', contentType)
        .header('cache-control', 'no-cache')
        .header('service-worker-allowed', '/')
        .header('etag', result.etag);
      if (isNotModified(request.headers, { etag: result.etag })) {
        return reply.code(304).send();
      }
      return result.body;
    };
    const { scriptPath, workerPath } = options;
    app.get(scriptPath, serve(PAGE_SCRIPT_FILE, 'text/javascript; charset=utf-8'));
    app.get(workerPath, serve(WORKER_SCRIPT_FILE, 'text/javascript; charset=utf-8'));
    app.get(`${scriptPath}.map`, serve(`${PAGE_SCRIPT_FILE}.map`, 'application/json; charset=utf-8'));
    app.get(`${workerPath}.map`, serve(`${WORKER_SCRIPT_FILE}.map`, 'application/json; charset=utf-8'));
    for (const file of WORKER_ADDON_FILES) {
      const path = workerAddonPath(workerPath, file);
      if (path === scriptPath || path === workerPath) continue;
      app.get(path, serve(file, 'text/javascript; charset=utf-8'));
      app.get(`${path}.map`, serve(`${file}.map`, 'application/json; charset=utf-8'));
    }
  }
}
