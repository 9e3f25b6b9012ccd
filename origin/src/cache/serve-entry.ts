/**
 * Answering a request from a cache entry: a 304 when the request's validators match the
 * entry's (RFC 9110 Section 13.1: If-None-Match with the weak comparison, else
 * If-Modified-Since), else the stored headers and body. Entries copied from a shared-cache
 * source (an upstream, a peer) carry their Age (RFC 9111 Section 5.1).
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { isNotModified } from '../http/conditional.js';
import type { CacheEntry } from './types.js';

/** Headers a 304 repeats (RFC 9110 Section 15.4.5), beside the validators. */
const NOT_MODIFIED_HEADERS = ['cache-control', 'content-location', 'etag', 'expires', 'last-modified', 'vary'];

/** Sends the entry (or a 304); returns the body bytes sent. */
export function serveEntry(request: FastifyRequest, reply: FastifyReply, entry: CacheEntry, nowMs: number): number {
  const headers = { ...entry.response.headers };
  if (entry.source === 'proxy' || entry.source === 'peer') {
    headers.age = String(entry.initialAgeS + Math.max(0, Math.floor((nowMs - entry.storedAtMs) / 1000)));
  }
  if (isNotModified(request.headers, { etag: headers.etag, lastModified: headers['last-modified'] })) {
    reply.code(304);
    for (const name of NOT_MODIFIED_HEADERS) if (headers[name] !== undefined) reply.header(name, headers[name]);
    reply.send();
    return 0;
  }
  reply.code(200).headers(headers).header('content-length', String(entry.response.body.byteLength));
  reply.send(entry.response.body);
  return request.method === 'HEAD' ? 0 : entry.response.body.byteLength;
}
