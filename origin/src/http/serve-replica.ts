/**
 * Serving a replica from the replica store, with the HTTP semantics the worker relies on.
 * The validators are the replica's own, not the blob file's: a strong ETag (the content
 * digest, identical on every server holding the same version) and Last-Modified (the
 * version's own time, `<timeMs>@<writer>`, so that it too is identical on every server: the
 * time a server happened to store its copy differs between servers by up to the push delay,
 * and a worker resuming a body on another replica would see a different entity). Conditional
 * requests (If-None-Match, If-Modified-Since → 304, http/conditional.ts), If-Range and the
 * byte range (http/byte-range.ts: one range → 206, unsatisfiable → 416; several ranges get
 * the whole body, as RFC 9110 allows) are decided against them here; @fastify/send then
 * answers HEAD (headers only, with the full Content-Length) and streams the blob or its range.
 */
import send from '@fastify/send';
import type { Readable } from 'node:stream';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { replicaEtag, type ReplicaStore, type StoredReplica } from '../replicas/replica-store.js';
import { formatVersion, REPLICA_VERSION_HEADER } from '../replicas/replica-version.js';
import { WEBPP_ERR_REPLICA_UNREADABLE } from '../errors.js';
import { byteRangeOf } from './byte-range.js';
import { isNotModified, isRangeCurrent } from './conditional.js';

export async function serveReplica(request: FastifyRequest, reply: FastifyReply, store: ReplicaStore, replica: StoredReplica): Promise<void> {
  const release = store.hold(replica); // before any await: an update meanwhile must not delete the blob under us
  reply.raw.once('close', release);
  const etag = replicaEtag(replica);
  const modifiedAtMs = replica.version.timeMs;
  const lastModified = new Date(modifiedAtMs).toUTCString();
  reply
    .header('content-type', replica.contentType)
    .header('etag', etag)
    .header('last-modified', lastModified)
    .header('accept-ranges', 'bytes')
    .header('cache-control', 'no-cache')
    // The stored content type is what the uploader declared: browsers must not sniff another.
    .header('x-content-type-options', 'nosniff')
    .header(REPLICA_VERSION_HEADER, formatVersion(replica.version));

  if (isNotModified(request.headers, { etag, lastModified })) {
    release();
    reply.code(304).removeHeader('content-type');
    await reply.send();
    return;
  }

  const range = isRangeCurrent(request.headers, { etag, lastModified }) ? byteRangeOf(request.headers.range, replica.size) : undefined;
  if (range === 'unsatisfiable') {
    release();
    reply.code(416).header('content-range', `bytes */${replica.size}`).header('content-length', '0');
    await reply.send();
    return;
  }
  // @fastify/send reads only the method and headers of the request it is given: it sees the
  // range decided above, in the one form its parser reads as range-parser does, and nothing
  // else (the conditions were decided on the replica's validators, which it does not know:
  // its own are derived from the blob file's stat).
  const headers = range === undefined ? {} : { range: `bytes=${range.start}-${range.end}` };
  const sendRequest = { method: request.method, headers } as unknown as Readable;
  const file = store.blobFile(replica);
  const result = await send(sendRequest, file.name, {
    root: file.root,
    acceptRanges: true,
    cacheControl: false,
    contentType: false,
    etag: false,
    lastModified: false,
    dotfiles: 'allow',
    extensions: false,
    index: false,
  });
  if (result.type === 'error') {
    release();
    // The blob is gone or unreadable (a damaged store): a 5xx sends the worker to another
    // replica; the file system's message, with its paths, stays in the log.
    request.log.error({ err: result.metadata.error, path: replica.path }, 'webpp stored replica unreadable');
    throw new WEBPP_ERR_REPLICA_UNREADABLE(replica.logicalUrl);
  }
  reply.code(result.statusCode).header('content-length', String(result.headers['Content-Length']));
  const contentRange = result.headers['Content-Range'];
  if (contentRange !== undefined) reply.header('content-range', contentRange);
  if (request.method === 'HEAD' || replica.size === 0) {
    result.stream.destroy();
    release();
    await reply.send();
    return;
  }
  result.stream.once('close', release);
  await reply.send(result.stream);
}
