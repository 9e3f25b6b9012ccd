/**
 * Serving a replica from the replica store, with the HTTP semantics the worker relies on:
 * a strong ETag (the content digest, identical on every server holding the same version),
 * conditional requests (If-None-Match, If-Modified-Since → 304), byte ranges (a single
 * range → 206, unsatisfiable → 416, If-Range honoured; multi-range requests get the whole
 * body, which RFC 9110 allows) and HEAD (headers only, with the full Content-Length).
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { replicaEtag, type ReplicaStore, type StoredReplica } from '../replicas/replica-store.js';
import { formatVersion, REPLICA_VERSION_HEADER } from '../replicas/replica-version.js';

export type ByteRange = { start: number; end: number };

/**
 * Parses a Range header for a body of `size` bytes: a range, 'unsatisfiable', or
 * undefined when the header is absent, malformed or asks for several ranges (serve 200).
 */
export function parseRange(header: string | undefined, size: number): ByteRange | 'unsatisfiable' | undefined {
  if (header === undefined) return undefined;
  const match = /^\s*bytes\s*=\s*(\d*)\s*-\s*(\d*)\s*$/i.exec(header);
  if (match === null) return undefined;
  const [, first = '', last = ''] = match;
  if (first === '' && last === '') return undefined;
  if (first === '') {
    const suffix = Number(last);
    if (suffix === 0 || size === 0) return 'unsatisfiable';
    return { start: Math.max(0, size - suffix), end: size - 1 };
  }
  const start = Number(first);
  const end = last === '' ? size - 1 : Math.min(Number(last), size - 1);
  if (last !== '' && Number(last) < start) return undefined;
  if (start >= size) return 'unsatisfiable';
  return { start, end };
}

function etagMatches(header: string, etag: string): boolean {
  if (header.trim() === '*') return true;
  const opaque = etag.replace(/^W\//, '');
  return header.split(',').some((candidate) => candidate.trim().replace(/^W\//, '') === opaque);
}

export async function serveReplica(
  request: FastifyRequest,
  reply: FastifyReply,
  store: ReplicaStore,
  replica: StoredReplica,
): Promise<void> {
  const etag = replicaEtag(replica);
  const lastModified = new Date(replica.updatedAtMs).toUTCString();
  reply
    .header('content-type', replica.contentType)
    .header('etag', etag)
    .header('last-modified', lastModified)
    .header('accept-ranges', 'bytes')
    .header('cache-control', 'no-cache')
    // The stored content type is what the uploader declared: browsers must not sniff another.
    .header('x-content-type-options', 'nosniff')
    .header(REPLICA_VERSION_HEADER, formatVersion(replica.version));

  const ifNoneMatch = request.headers['if-none-match'];
  const ifModifiedSince = request.headers['if-modified-since'];
  const notModified =
    ifNoneMatch !== undefined
      ? etagMatches(ifNoneMatch, etag)
      : ifModifiedSince !== undefined && Math.floor(replica.updatedAtMs / 1000) <= Math.floor(Date.parse(ifModifiedSince) / 1000);
  if (notModified) {
    reply.code(304).removeHeader('content-type');
    await reply.send();
    return;
  }

  let range = parseRange(request.headers.range, replica.size);
  const ifRangeHeader = request.headers['if-range'];
  const ifRange = Array.isArray(ifRangeHeader) ? ifRangeHeader[0] : ifRangeHeader?.trim();
  if (range !== undefined && ifRange !== undefined) {
    const stillCurrent = ifRange.startsWith('"') || ifRange.startsWith('W/')
      ? ifRange === etag
      : Date.parse(ifRange) === Math.floor(replica.updatedAtMs / 1000) * 1000;
    if (!stillCurrent) range = undefined;
  }
  if (range === 'unsatisfiable') {
    reply.code(416).header('content-range', `bytes */${replica.size}`).header('content-length', '0');
    await reply.send();
    return;
  }
  const head = request.method === 'HEAD';
  if (range !== undefined) {
    reply
      .code(206)
      .header('content-range', `bytes ${range.start}-${range.end}/${replica.size}`)
      .header('content-length', String(range.end - range.start + 1));
    await reply.send(head ? undefined : await store.read(replica, range));
    return;
  }
  reply.code(200).header('content-length', String(replica.size));
  await reply.send(head || replica.size === 0 ? undefined : await store.read(replica));
}
