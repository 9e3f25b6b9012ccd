/**
 * CORS for replicated resources. The Service Worker fetches replicas from other origins in
 * CORS mode with credentials omitted (never sending the user's cookies to another
 * origin), and sends HEAD probes. Plain GET and HEAD need no preflight; a Range header
 * outside the CORS-safelisted single-range form does, so OPTIONS is answered as well.
 * `Access-Control-Allow-Origin: *` is only valid for requests without credentials, which
 * is exactly what the worker sends.
 */
import type { FastifyReply } from 'fastify';
import { BINDINGS_HEADER, CONTROL_HEADER, LOAD_HEADER, SERVER_TIMING_HEADER } from '@webpp/core';
import { REPLICA_VERSION_HEADER } from '../replicas/replica-version.js';

export const EXPOSED_HEADERS = [
  BINDINGS_HEADER,
  CONTROL_HEADER,
  REPLICA_VERSION_HEADER,
  SERVER_TIMING_HEADER,
  LOAD_HEADER,
  'etag',
  'last-modified',
  'content-length',
  'content-range',
  'content-type',
  'accept-ranges',
  'cache-control',
  'date',
].join(', ');

const PREFLIGHT_MAX_AGE_S = 86_400;
const ALLOWED_REQUEST_HEADERS = ['range', 'if-range', 'if-none-match', 'if-modified-since', 'cache-control', 'pragma'];

export function setCorsHeaders(reply: FastifyReply): void {
  reply.header('access-control-allow-origin', '*');
  reply.header('access-control-expose-headers', EXPOSED_HEADERS);
  reply.header('timing-allow-origin', '*');
}

/** Answers a CORS preflight for GET / HEAD. Returns false when the request is not a preflight we accept. */
export function answerPreflight(requestMethod: string | undefined, requestHeaders: string | undefined, reply: FastifyReply): boolean {
  const method = requestMethod?.trim().toUpperCase();
  if (method !== 'GET' && method !== 'HEAD') return false;
  const asked = (requestHeaders ?? '')
    .split(',')
    .map((name) => name.trim().toLowerCase())
    .filter((name) => name !== '');
  if (!asked.every((name) => ALLOWED_REQUEST_HEADERS.includes(name))) return false;
  reply
    .code(204)
    .header('access-control-allow-origin', '*')
    .header('access-control-allow-methods', 'GET, HEAD')
    .header('access-control-allow-headers', ALLOWED_REQUEST_HEADERS.join(', '))
    .header('access-control-max-age', String(PREFLIGHT_MAX_AGE_S))
    .header('timing-allow-origin', '*')
    .header('vary', 'Access-Control-Request-Method, Access-Control-Request-Headers');
  return true;
}
