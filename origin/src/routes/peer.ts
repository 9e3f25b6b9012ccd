/**
 * Server-to-server endpoints, signed with the cluster secret (http/auth.ts):
 *
 *   POST /.well-known/webpp/sync                         y-protocols sync messages (directory)
 *   PUT  /.well-known/webpp/peer/replicas/<path>         a newer version of a replica held here
 *        headers: webpp-replica-version, webpp-logical-url, content-type
 *
 * The signature's presence is checked before the body is read (401), its validity once the
 * body is in (403); either way nothing changes. A signature verifies only when it was made
 * for this server's public origin (or one of its `aliasUrls`). A push is refused unless it
 * is newer than what this server stores or last deleted there (tombstones), and unless the
 * directory lists this server as a replica of the pushed logical URL (replica-manager.ts).
 */
import type { FastifyInstance } from 'fastify';
import { addClusterAuth, signedBodyOf as bodyOf } from '../http/cluster-auth-hooks.js';
import { WEBPP_ERR_BAD_HEADER } from '../errors.js';
import { handleSyncMessages, SYNC_PATH } from '../sync/peer-sync.js';
import { LOGICAL_URL_HEADER, PEER_REPLICAS_PATH } from '../replicas/replica-protocol.js';
import { formatVersion, parseVersion, REPLICA_VERSION_HEADER } from '../replicas/replica-version.js';
import { replicaEtag } from '../replicas/replica-store.js';
import { canonicalUrl } from '@webpp/core';
import { logicalPathOf } from './management.js';
import type { ReplicationDirectory } from '../directory/replication-directory.js';
import type { ResolvedOptions } from '../options.js';
import type { ReplicaManager } from '../replicas/replica-manager.js';

const MAX_SYNC_MESSAGE_BYTES = 64 * 1024 * 1024;

export interface PeerRoutesOptions {
  options: Pick<ResolvedOptions, 'clusterSecret' | 'publicUrl' | 'aliasUrls' | 'maxClockSkewMs' | 'maxReplicaBytes' | 'scriptPath' | 'workerPath'>;
  directory: ReplicationDirectory;
  replicas: ReplicaManager;
  /** Resolves once the directory as it is now is on disk. */
  flushDirectory: () => Promise<void>;
}

export async function peerRoutes(app: FastifyInstance, deps: PeerRoutesOptions): Promise<void> {
  const { options, directory, replicas } = deps;
  addClusterAuth(app, options, Math.max(options.maxReplicaBytes, MAX_SYNC_MESSAGE_BYTES));

  app.post(SYNC_PATH, { bodyLimit: MAX_SYNC_MESSAGE_BYTES }, async (request, reply) => {
    const answer = handleSyncMessages(directory.doc, bodyOf(request), true);
    await deps.flushDirectory(); // what we acknowledge is on disk
    reply.header('content-type', 'application/octet-stream');
    return Buffer.from(answer.buffer, answer.byteOffset, answer.byteLength);
  });

  app.put(`${PEER_REPLICAS_PATH}/*`, { bodyLimit: options.maxReplicaBytes }, async (request) => {
    const path = logicalPathOf(request.url, PEER_REPLICAS_PATH, options);
    const version = parseVersion(request.headers[REPLICA_VERSION_HEADER] as string | undefined);
    if (version === undefined) throw new WEBPP_ERR_BAD_HEADER(REPLICA_VERSION_HEADER, 'expected "<timeMs>@<writer origin>"');
    const logicalHeader = request.headers[LOGICAL_URL_HEADER] as string | undefined;
    const logicalUrl = logicalHeader === undefined ? undefined : canonicalUrl(logicalHeader);
    if (logicalUrl === undefined) throw new WEBPP_ERR_BAD_HEADER(LOGICAL_URL_HEADER, 'expected an absolute http(s) URL');
    const contentType = request.headers['content-type'] ?? 'application/octet-stream';
    const replica = await replicas.receive(path, bodyOf(request), contentType, version, logicalUrl, { source: 'peer', request });
    return { path, version: formatVersion(replica.version), etag: replicaEtag(replica) };
  });
}
