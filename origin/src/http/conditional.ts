/**
 * The one conditional-request rule of every route that answers 304 (RFC 9110 Section 13.1):
 * If-None-Match with the weak comparison over a list of entity tags, `*` matching any current
 * representation, and If-Modified-Since only when there is no If-None-Match (Section 13.2.2).
 * `fresh` (jshttp) decides it.
 *
 * The request's Cache-Control is not given to `fresh`: its "no-cache means stale" rule is a
 * cache's (RFC 9111 Section 5.2.1.4), and this server is the origin. The Fetch standard adds
 * `Cache-Control: no-cache` to every request in cache mode 'no-store', which is how the worker
 * fetches a replica: with the rule, each of its conditional requests would get the whole body.
 */
import fresh from 'fresh';
import type { IncomingHttpHeaders } from 'node:http';

/** The response's validators: its ETag and, where it sends one, its Last-Modified (an HTTP-date). */
export interface Validators {
  etag: string | undefined;
  lastModified?: string;
}

/** True when the request's conditions say the client's copy is current: answer 304. */
export function isNotModified(requestHeaders: IncomingHttpHeaders, { etag, lastModified }: Validators): boolean {
  const conditions = { 'if-none-match': requestHeaders['if-none-match'], 'if-modified-since': requestHeaders['if-modified-since'] };
  return fresh(conditions, lastModified === undefined ? { etag } : { etag, 'last-modified': lastModified });
}
