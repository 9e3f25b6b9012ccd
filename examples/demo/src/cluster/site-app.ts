/**
 * The replica server's app: the gallery site served by @fastify/static, with the webpp origin
 * plugin doing the rest (bindings headers, the worker scripts, CORS, the replication
 * directory, replica management and propagation to the peer replicas).
 */
import Fastify, { type FastifyInstance } from 'fastify';
import fastifyStatic from '@fastify/static';
import { webppOrigin } from '@webpp/origin';

/**
 * The replicated part of the site: every page and every folder of it, on every server (paper
 * Section 2; "…/*" entries are wildcards). The plugin's own /webpp.js and /webpp-sw.js stay
 * unreplicated: a browser always gets its worker from the origin it visits.
 */
export const SITE_ENTRIES: readonly string[] = [
  '/',
  '/index.html',
  '/about.html',
  '/dashboard.html',
  '/favicon.svg',
  '/css/*',
  '/fonts/*',
  '/img/*',
  '/js/*',
  '/photos/*',
];

export type SiteLogLevel = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'silent';

export interface SiteAppOptions {
  siteDir: string;
  /** This replica's own state (directory, replica content); kept across stop and restart. */
  dataDir: string;
  /** This replica's public origin, e.g. "http://b.localhost:8082". */
  selfOrigin: string;
  /** The site's logical origin: the primary copy's, e.g. "http://a.localhost:8081". */
  logicalOrigin: string;
  /** Every replica's public origin, this one included. */
  clusterOrigins: readonly string[];
  /** Bearer token of the management API (POST, PUT, DELETE of replicas). */
  adminToken: string;
  /** Shared secret of server-to-server calls. */
  clusterSecret: string;
  logLevel: SiteLogLevel;
}

export async function createSiteApp(options: SiteAppOptions): Promise<FastifyInstance> {
  const app = Fastify({ logger: { level: options.logLevel } });
  await app.register(webppOrigin, {
    publicUrl: options.selfOrigin,
    logicalOrigin: options.logicalOrigin,
    dataDir: options.dataDir,
    directory: { formatVersion: 1, logicalOrigin: options.logicalOrigin, entries: SITE_ENTRIES.map((logical) => ({ logical, servers: [...options.clusterOrigins] })) },
    peers: options.clusterOrigins.filter((origin) => origin !== options.selfOrigin),
    adminToken: options.adminToken,
    clusterSecret: options.clusterSecret,
  });
  await app.register(fastifyStatic, { root: options.siteDir, index: ['index.html'] });
  return app;
}
