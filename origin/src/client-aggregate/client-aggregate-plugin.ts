/**
 * The client aggregate for first visits (issue 13 §6), as one step of the response path,
 * registered by its feature (features/client-aggregate.ts), so present only when it is on: on every response for content, the
 * `webpp-aggregate` header (core's push/aggregate-header.ts) — the report interval, and the
 * rows of the requester's network class that rest on at least k reports — and the endpoint
 * the workers report to (report-route.ts). A memory-cache copy never keeps the header
 * (cache/freshness.ts drops webpp-* headers), so each client gets its own class's rows.
 */
import fp from 'fastify-plugin';
import type { FastifyInstance } from 'fastify';
import { AGGREGATE_HEADER, canonicalUrl, formatAggregateHeader } from '@webpp/core';
import type { ReplicationDirectory } from '../directory/replication-directory.js';
import { isWellKnown } from '../http/request-paths.js';
import type { ResolvedOptions } from '../options.js';
import type { ClientAggregates } from './client-aggregates.js';
import { NetworkClasses } from './network-class.js';
import { clientReportRoute } from './report-route.js';
import { pathStep } from '../compose/path-hooks.js';

export interface ClientAggregatePluginOptions {
  options: Pick<ResolvedOptions, 'clientReportIntervalMs' | 'publicUrl' | 'logicalOrigin'>;
  aggregates: ClientAggregates;
  directory: ReplicationDirectory;
}

async function clientAggregatePlugin(app: FastifyInstance, { options, aggregates, directory }: ClientAggregatePluginOptions): Promise<void> {
  const classes = new NetworkClasses();
  const step = pathStep(app, 'webpp-client-aggregate');
  step.addHook('onSend', async (request, reply, payload) => {
    if (isWellKnown(request.url) || (request.method !== 'GET' && request.method !== 'HEAD')) return payload;
    const rows = aggregates.published(classes.classOf(request.ip), Date.now());
    if (rows.length > 0) aggregates.headersWithRows += 1;
    reply.header(AGGREGATE_HEADER, formatAggregateHeader({ reportIntervalMs: options.clientReportIntervalMs, rows }));
    return payload;
  });
  const allowedOrigins = new Set([new URL(options.publicUrl).origin, new URL(options.logicalOrigin).origin]);
  await app.register(clientReportRoute, { aggregates, classes, allowedOrigins, isKnownServer: knownServers(directory, allowedOrigins) });
}

/** Whether a server is one the site uses: an origin the directory names, or this site's. */
function knownServers(directory: ReplicationDirectory, own: ReadonlySet<string>): (server: string) => boolean {
  let known: { version: number; servers: Set<string> } | undefined;
  return (server) => {
    if (known?.version !== directory.version) {
      const servers = new Set(own);
      for (const entry of directory.entries()) for (const physical of entry.physical) servers.add(originOf(physical) ?? '');
      known = { version: directory.version, servers };
    }
    return known.servers.has(server);
  };
}

function originOf(url: string): string | undefined {
  const canonical = canonicalUrl(url.endsWith('/*') ? url.slice(0, -1) : url);
  return canonical === undefined ? undefined : new URL(canonical).origin;
}

export const webppClientAggregate = fp(clientAggregatePlugin, { fastify: '5.x', name: 'webpp-client-aggregate' });
