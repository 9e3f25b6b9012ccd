/**
 * Revalidating an expired proxy entry instead of fetching it again (RFC 9111 Section 4.3):
 * the request to the upstream carries the entry's validators (If-None-Match, else
 * If-Modified-Since); a 304 means the stored body still holds, and the headers the 304
 * carries update the stored ones (Section 4.3.4: "the cache … updates the stored response
 * … using the header fields provided in the 304").
 */
import type { CacheEntry } from './types.js';
import { storedHeaders } from './freshness.js';

type RawHeaders = Record<string, string | string[] | number | undefined>;

/** Whether the client's request is conditional already (then it is forwarded as it is). */
export function hasConditional(headers: RawHeaders): boolean {
  return headers['if-none-match'] !== undefined || headers['if-modified-since'] !== undefined || headers['if-match'] !== undefined || headers['if-unmodified-since'] !== undefined;
}

/** The conditional headers that revalidate `entry`. */
export function conditionalHeadersFor(entry: CacheEntry): Record<string, string> {
  const { etag, 'last-modified': lastModified } = entry.response.headers;
  if (etag !== undefined) return { 'if-none-match': etag };
  return lastModified === undefined ? {} : { 'if-modified-since': lastModified };
}

/** The stored headers updated by a 304's (Section 4.3.4); the body's own length and type stay. */
export function refreshedHeaders(stored: Record<string, string>, notModified: RawHeaders): Record<string, string> {
  const updates = storedHeaders(notModified);
  delete updates['content-type'];
  delete updates['content-encoding'];
  return { ...stored, ...updates };
}
