/**
 * The one conditional-request rule of every route that answers 304 (RFC 9110 Section 13.1):
 * If-None-Match with the weak comparison over a list of entity tags, `*` matching any current
 * representation, and If-Modified-Since only when there is no If-None-Match (Section 13.2.2).
 * `fresh` (jshttp) decides it. If-Range (Section 13.1.5) is decided here too.
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

/**
 * If-Range (RFC 9110 Section 13.1.5): a range is honoured when the request has no If-Range,
 * or names the current strong ETag, or exactly the current Last-Modified; else the whole,
 * current body is sent.
 */
export function isRangeCurrent(requestHeaders: IncomingHttpHeaders, { etag, lastModified }: Validators): boolean {
  const header = requestHeaders['if-range'];
  const ifRange = (Array.isArray(header) ? header[0] : header)?.trim();
  if (ifRange === undefined) return true;
  if (ifRange.startsWith('"') || ifRange.startsWith('W/')) return etag !== undefined && !etag.startsWith('W/') && ifRange === etag;
  return lastModified !== undefined && Date.parse(ifRange) === Date.parse(lastModified);
}
