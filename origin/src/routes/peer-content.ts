/**
 * Server-to-server content for lazy replication (issue 14), signed with the cluster secret
 * like every peer call (http/cluster-auth-hooks.ts):
 *
 *   GET /.well-known/webpp/peer/content/<path>
 *       → 200 the raw bytes this server holds at <path> (lazy/holder-content.ts), with
 *         content-type, etag (content digest), webpp-replica-version, webpp-logical-url
 *       → 304 when If-None-Match names that etag (a co-op revalidating its copy, T_validate)
 *       → 206 for one byte range (`Range: bytes=<first>-` with If-Range naming that etag: a
 *         co-op resuming a fetch cut by another holder); an unsatisfiable one gets the whole body
 *       → 404 WEBPP_ERR_REPLICA_NOT_FOUND when it holds nothing there.
 *
 * It answers a signed peer whatever else guards the public route (kill switch, a site's own
 * auth hooks on its routes): the signature is the credential. A GET changes nothing, so a
 * replayed signature (within maxClockSkewMs, to this server only) reveals only what the
 * cluster may read anyway.
 */
import { WELL_KNOWN_PREFIX } from '@webpp/core';
import { resolve } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { addClusterAuth } from '../http/cluster-auth-hooks.js';
import { byteRangeOf } from '../http/byte-range.js';
import { isNotModified, isRangeCurrent } from '../http/conditional.js';
import { WEBPP_ERR_REPLICA_NOT_FOUND } from '../errors.js';
import { readHolderContent } from '../lazy/holder-content.js';
import { LOGICAL_URL_HEADER } from '../replicas/replica-manager.js';
import type { ReplicaManager } from '../replicas/replica-manager.js';
import type { ReplicaStore } from '../replicas/replica-store.js';
import { formatVersion, REPLICA_VERSION_HEADER } from '../replicas/replica-version.js';
import type { ResolvedOptions } from '../options.js';
import { logicalPathOf } from './management.js';

export const PEER_CONTENT_PATH = `${WELL_KNOWN_PREFIX}peer/content`;

export interface PeerContentRoutesOptions {
  options: ResolvedOptions;
  store: ReplicaStore;
  replicas: ReplicaManager;
}

export async function peerContentRoutes(app: FastifyInstance, { options, store, replicas }: PeerContentRoutesOptions): Promise<void> {
  addClusterAuth(app, options, 0);
  const source = {
    store,
    contentRoot: options.contentRoot === undefined ? undefined : resolve(options.contentRoot),
    publicUrl: options.publicUrl,
    maxBytes: options.maxReplicaBytes,
  };

  app.get(`${PEER_CONTENT_PATH}/*`, async (request, reply) => {
    const path = logicalPathOf(request.url, PEER_CONTENT_PATH, options);
    const held = await readHolderContent(source, path);
    if (held === undefined) throw new WEBPP_ERR_REPLICA_NOT_FOUND(replicas.logicalUrlOf(path));
    reply
      .header('etag', held.etag)
      .header(REPLICA_VERSION_HEADER, formatVersion(held.version))
      .header(LOGICAL_URL_HEADER, store.get(path)?.logicalUrl ?? replicas.logicalUrlOf(path))
      .header('cache-control', 'no-store');
    if (isNotModified(request.headers, { etag: held.etag })) return reply.code(304).send();
    reply.header('content-type', held.contentType);
    const range = isRangeCurrent(request.headers, { etag: held.etag }) ? byteRangeOf(request.headers.range, held.content.byteLength) : undefined;
    if (typeof range === 'object') {
      return reply
        .code(206)
        .header('content-range', `bytes ${range.start}-${range.end}/${held.content.byteLength}`)
        .send(held.content.subarray(range.start, range.end + 1));
    }
    return reply.send(held.content);
  });
}
