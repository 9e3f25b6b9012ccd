/**
 * The management API (paper Section 5.2, Figure 8), under /.well-known/webpp/ so it can
 * never collide with a site's own routes:
 *
 *   POST   /.well-known/webpp/replicas/<logical path>   body = content   create this server's replica
 *   PUT    /.well-known/webpp/replicas/<logical path>   body = content   update every replica
 *   DELETE /.well-known/webpp/replicas/<logical path>                    delete this server's replica
 *   GET    /.well-known/webpp/replicas/<logical path>                    what this server knows about it
 *   GET    /.well-known/webpp/replicas                                   replicas stored on this server
 *   POST   /.well-known/webpp/directory   { add?: [entry…], remove?: [entry…] }  edit directory entries
 *
 * The logical URL is the logical origin + <logical path>. Every call needs
 * `Authorization: Bearer <admin token>`; the check runs before the body is read, so a
 * rejected call changes nothing and costs nothing.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { checkBearer } from '../http/auth.js';
import { assertCanonicalPath, assertCanonicalUrlSpec } from '../paths.js';
import { reservedPairReason, reservedPathReason } from '../reserved-paths.js';
import { WEBPP_ERR_BAD_BODY, WEBPP_ERR_BAD_PATH, WEBPP_ERR_DISABLED, WEBPP_ERR_FORBIDDEN, WEBPP_ERR_UNAUTHORIZED } from '../errors.js';
import { replicaEtag, type StoredReplica } from '../replicas/replica-store.js';
import { formatVersion } from '../replicas/replica-version.js';
import { directoryPairsFrom } from '../directory/directory-file.js';
import type { ReplicationDirectory } from '../directory/replication-directory.js';
import type { ResolvedOptions } from '../options.js';
import type { ReplicaManager } from '../replicas/replica-manager.js';
import type { ReplicaStore } from '../replicas/replica-store.js';
import { WELL_KNOWN_PREFIX } from '@webpp/core';

export const REPLICAS_PREFIX = `${WELL_KNOWN_PREFIX}replicas`;
export const DIRECTORY_PATH = `${WELL_KNOWN_PREFIX}directory`;

/** onRequest hook: admin bearer token, constant-time. */
export function requireAdmin(adminToken: string | undefined, what: string) {
  return async (request: FastifyRequest): Promise<void> => {
    const token = adminToken;
    if (token === undefined) throw new WEBPP_ERR_DISABLED(`${what} is disabled: this server has no admin token configured`);
    const result = checkBearer(request.headers.authorization, token);
    if (!result.ok) throw result.status === 401 ? new WEBPP_ERR_UNAUTHORIZED(result.reason) : new WEBPP_ERR_FORBIDDEN(result.reason);
  };
}

/**
 * The logical path of a management or peer URL, validated: 400 for anything non-canonical,
 * for a query or a fragment (never silently dropped), and for the paths webpp serves itself.
 */
export function logicalPathOf(rawUrl: string, prefix: string, options: Pick<ResolvedOptions, 'scriptPath' | 'workerPath'>): string {
  const path = assertCanonicalPath(rawUrl.slice(prefix.length));
  const reserved = reservedPathReason(path, options);
  if (reserved !== undefined) throw new WEBPP_ERR_BAD_PATH(JSON.stringify(path), reserved);
  return path;
}

function describe(replica: StoredReplica): object {
  return {
    path: replica.path,
    logicalUrl: replica.logicalUrl,
    contentType: replica.contentType,
    version: formatVersion(replica.version),
    etag: replicaEtag(replica),
    size: replica.size,
    updatedAtMs: replica.updatedAtMs,
  };
}

function contentTypeOf(request: FastifyRequest): string {
  const value = request.headers['content-type'];
  return value === undefined || value === '' ? 'application/octet-stream' : value.slice(0, 256);
}

function bodyOf(request: FastifyRequest): Buffer {
  return Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
}

/** Every logical and physical URL of the entries given, checked as the replica API checks paths (400 otherwise). */
function assertCanonicalEntries(entries: unknown): void {
  if (!Array.isArray(entries)) return; // the schema (directoryPairsFrom) says what is wrong
  for (const entry of entries as unknown[]) {
    if (entry === null || typeof entry !== 'object') continue;
    const { logical, physical } = entry as { logical?: unknown; physical?: unknown };
    for (const url of [logical, ...(Array.isArray(physical) ? (physical as unknown[]) : [])]) if (typeof url === 'string') assertCanonicalUrlSpec(url);
  }
}

export interface ManagementRoutesOptions {
  options: ResolvedOptions;
  directory: ReplicationDirectory;
  store: ReplicaStore;
  replicas: ReplicaManager;
  /** Resolves once the directory as it is now is on disk. */
  flushDirectory: () => Promise<void>;
}

export async function managementRoutes(app: FastifyInstance, deps: ManagementRoutesOptions): Promise<void> {
  const { options, directory, store } = deps;
  app.addHook('onRequest', requireAdmin(options.adminToken, 'Replica management'));
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: options.maxReplicaBytes }, (_request, body, done) => {
    done(null, body);
  });
  const bodyLimit = options.maxReplicaBytes;
  const manager = deps.replicas;

  app.get(REPLICAS_PREFIX, async () => ({ replicas: store.list().map(describe) }));

  app.post(`${REPLICAS_PREFIX}/*`, { bodyLimit }, async (request, reply: FastifyReply) => {
    const path = logicalPathOf(request.url, REPLICAS_PREFIX, options);
    const created = await manager.create(path, bodyOf(request), contentTypeOf(request), { source: 'admin', request });
    reply.code(201).header('location', created.physicalUrl);
    return {
      logicalUrl: created.logicalUrl,
      physicalUrl: created.physicalUrl,
      ...describe(created.replica),
      directoryVersion: directory.version,
    };
  });

  app.put(`${REPLICAS_PREFIX}/*`, { bodyLimit }, async (request) => {
    const path = logicalPathOf(request.url, REPLICAS_PREFIX, options);
    return manager.update(path, bodyOf(request), contentTypeOf(request), { source: 'admin', request });
  });

  app.delete(`${REPLICAS_PREFIX}/*`, async (request) => {
    const path = logicalPathOf(request.url, REPLICAS_PREFIX, options);
    const removed = await manager.remove(path, { source: 'admin', request });
    return { ...removed, deleted: true, directoryVersion: directory.version };
  });

  app.get(`${REPLICAS_PREFIX}/*`, async (request) => {
    const path = logicalPathOf(request.url, REPLICAS_PREFIX, options);
    const logicalUrl = manager.logicalUrlOf(path);
    const stored = manager.get(path);
    return {
      logicalUrl,
      physicalUrl: manager.physicalUrlOf(path),
      stored: stored === undefined ? null : describe(stored),
      replicas: directory.lookup(logicalUrl)?.physicalUrls ?? [],
      directoryVersion: directory.version,
    };
  });

  app.post(DIRECTORY_PATH, { bodyLimit: 16 * 1024 * 1024 }, async (request) => {
    let json: { add?: unknown; remove?: unknown };
    try {
      json = JSON.parse(bodyOf(request).toString('utf8')) as { add?: unknown; remove?: unknown };
    } catch (error) {
      throw new WEBPP_ERR_BAD_BODY(`not JSON (${(error as Error).message})`);
    }
    if (json === null || typeof json !== 'object') throw new WEBPP_ERR_BAD_BODY('expected {"add": [...], "remove": [...]}');
    const asFile = (entries: unknown, field: string) => {
      assertCanonicalEntries(entries);
      try {
        return directoryPairsFrom({ formatVersion: 1, entries: entries ?? [] }, options.logicalOrigin, field);
      } catch (error) {
        throw new WEBPP_ERR_BAD_BODY((error as Error).message);
      }
    };
    const add = asFile(json.add, 'add');
    const remove = asFile(json.remove, 'remove');
    for (const pair of add) {
      const reserved = reservedPairReason(pair, options);
      if (reserved !== undefined) throw new WEBPP_ERR_BAD_PATH(reserved.url, reserved.reason);
    }
    directory.batch({ add, remove });
    await deps.flushDirectory();
    return directory.toJSON();
  });
}
