/**
 * Whether a response may be kept, for how long, and with which headers.
 *
 * - Never kept: anything but a 200 to a GET without Authorization; a response with
 *   Set-Cookie (one user's cookie must not reach another), a content coding, or a Vary on
 *   anything but Accept-Encoding; and whatever RFC 9111 forbids a shared cache to store
 *   (`no-store`, `private`, …), judged by http-cache-semantics as a shared cache.
 * - Lifetime: in proxy mode the upstream's freshness (RFC 9111 Section 4.2: s-maxage,
 *   max-age, Expires, or the heuristic on Last-Modified), since the upstream is another
 *   server and says how long its answer holds; nothing fresh, nothing kept. For the site's
 *   own files and routes the server is the origin itself, and the lifetime is the route's
 *   declaration (IBM accelerator: "cache policy parameters determine … what the default
 *   lifetimes are", headers override them) — its `Cache-Control: max-age` speaks to browsers.
 * - Validator: a response without one gets a content-hash ETag, the same on every server
 *   holding the same bytes, so that a change (after an invalidation) changes the validator
 *   and browsers and the worker revalidate to the new content.
 */
import { createHash } from 'node:crypto';
import CachePolicy from 'http-cache-semantics';
import type { CacheSource } from './types.js';

/**
 * Headers never stored: hop-by-hop, per-response, or added again by webpp's plugins (CORS,
 * bindings, Server-Timing: a copy must not carry the service time of the server, or the
 * moment, it was filled on).
 */
const UNSTORED_HEADERS = new Set(['connection', 'keep-alive', 'transfer-encoding', 'content-length', 'date', 'age', 'set-cookie', 'timing-allow-origin', 'server-timing', 'upgrade', 'trailer', 'proxy-connection']);

type RawHeaders = Record<string, string | string[] | number | undefined>;

function headerText(value: string | string[] | number | undefined): string | undefined {
  if (value === undefined) return undefined;
  return Array.isArray(value) ? value.join(', ') : String(value);
}

/** The headers an entry keeps (lower-case names). */
export function storedHeaders(raw: RawHeaders): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(raw)) {
    const lower = name.toLowerCase();
    const text = headerText(value);
    if (text === undefined || UNSTORED_HEADERS.has(lower) || lower.startsWith('access-control-') || lower.startsWith('webpp-')) continue;
    headers[lower] = text;
  }
  return headers;
}

export interface FillRequest {
  method: string;
  url: string;
  headers: Record<string, string | string[] | undefined>;
}

export interface Lifetime {
  /** undefined: until invalidated or evicted. */
  ttlMs: number | undefined;
  initialAgeS: number;
}

/** How long a response may be kept, or undefined when it may not be kept. */
export function lifetimeOf(request: FillRequest, status: number, raw: RawHeaders, source: CacheSource, declaredTtlMs: number | undefined): Lifetime | undefined {
  if (request.method !== 'GET' || status !== 200 || request.headers.authorization !== undefined) return undefined;
  if (raw['set-cookie'] !== undefined) return undefined;
  const encoding = headerText(raw['content-encoding']);
  if (encoding !== undefined && encoding.toLowerCase() !== 'identity') return undefined;
  const vary = headerText(raw.vary);
  if (vary !== undefined && vary.split(',').some((field) => field.trim().toLowerCase() !== 'accept-encoding' && field.trim() !== '')) return undefined;
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(raw)) {
    const text = headerText(value);
    if (text !== undefined) headers[name.toLowerCase()] = text;
  }
  const policy = new CachePolicy({ method: request.method, url: request.url, headers: request.headers }, { status, headers }, { shared: true });
  if (!policy.storable()) return undefined;
  if (source !== 'proxy') return { ttlMs: declaredTtlMs, initialAgeS: 0 };
  const ttlMs = policy.timeToLive();
  return ttlMs > 0 ? { ttlMs, initialAgeS: Math.floor(policy.age()) } : undefined;
}

/** A strong validator of the bytes: the same on every server that holds them. */
export function contentEtag(body: Buffer): string {
  return `"wpc-${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"`;
}
