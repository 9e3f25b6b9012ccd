/**
 * Answers requests for automatic replicas placed on this server whose content it does not
 * hold yet (lazy/lazy-replicas.ts): the first such request starts a fetch from a holder,
 * and every request meanwhile is answered from it as the bytes arrive (stream-through),
 * never with a 404. No holder able to give it: 502 WEBPP_ERR_LAZY_FETCH_FAILED, which the
 * worker fails over from. Registered after webpp-stored-replicas: a stored copy answers first.
 * The response runs the onSend hooks of the plugins registered around this one, like a
 * stored replica's.
 */
import fp from 'fastify-plugin';
import type { FastifyInstance } from 'fastify';
import { WEBPP_ERR_LAZY_FETCH_FAILED } from '../errors.js';
import type { LazyReplicas } from '../lazy/lazy-replicas.js';
import type { FetchedHead } from '../lazy/shared-fetch.js';
import { formatVersion, REPLICA_VERSION_HEADER } from '../replicas/replica-version.js';
import { isNotModified } from './conditional.js';
import { isWellKnown, requestPath } from './request-paths.js';
import { pathStep } from '../compose/path-hooks.js';

export interface LazyReplicasPluginOptions {
  /** Undefined outside a cluster: nothing is added. */
  lazy: LazyReplicas | undefined;
}

async function lazyReplicasPlugin(app: FastifyInstance, { lazy }: LazyReplicasPluginOptions): Promise<void> {
  if (lazy === undefined) return;
  const step = pathStep(app, 'webpp-lazy-replicas');
  step.addHook('onRequest', async (request, reply) => {
    if ((request.method !== 'GET' && request.method !== 'HEAD') || isWellKnown(request.url)) return;
    const path = requestPath(request.url);
    const target = path === undefined ? undefined : await lazy.target(path);
    if (path === undefined || target === undefined) return;
    const fetch = lazy.fetch(path, target);
    let head: FetchedHead;
    try {
      head = await fetch.head;
    } catch (error) {
      request.log.warn({ path, err: (error as Error).message }, 'webpp lazy replication: no holder answered');
      throw new WEBPP_ERR_LAZY_FETCH_FAILED(target.logicalUrl);
    }
    const lastModified = new Date(head.version.timeMs).toUTCString();
    reply
      .header('content-type', head.contentType)
      .header('etag', head.etag)
      .header('last-modified', lastModified)
      .header('cache-control', 'no-cache')
      .header('x-content-type-options', 'nosniff')
      .header(REPLICA_VERSION_HEADER, formatVersion(head.version));
    if (isNotModified(request.headers, { etag: head.etag, lastModified })) {
      reply.code(304).removeHeader('content-type');
      return reply.send();
    }
    // Byte ranges are not honoured while the copy is on its way (RFC 9110 allows answering 200).
    reply.code(200).header('content-length', String(head.sizeBytes));
    if (request.method === 'HEAD' || head.sizeBytes === 0) return reply.send();
    try {
      await reply.send(fetch.reader());
    } catch (error) {
      if (!reply.raw.headersSent) throw error;
    }
    if (!reply.sent) reply.hijack();
    return reply;
  });
}

export const webppLazyReplicas = fp(lazyReplicasPlugin, {
  fastify: '5.x',
  name: 'webpp-lazy-replicas',
  dependencies: ['webpp-stored-replicas'],
});
