/**
 * HTTP caching rules (RFC 9111) for the worker's logical-URL cache (Web++ paper, Section 3.5:
 * a local cache that matches resources by logical URL, whichever replica served them). Pure
 * functions over a minimal headers interface, so that they run in the worker and in tests.
 */

/** What `Headers` offers that these rules need. */
export interface HeaderLookup {
  get(name: string): string | null;
}

export interface CacheControl {
  noStore: boolean;
  noCache: boolean;
  mustRevalidate: boolean;
  immutable: boolean;
  /** max-age in seconds, when present and valid. */
  maxAgeSeconds?: number;
}

/** Parses a Cache-Control value; unknown directives are ignored, a bad max-age is dropped. */
export function parseCacheControl(value: string | null | undefined): CacheControl {
  const result: CacheControl = { noStore: false, noCache: false, mustRevalidate: false, immutable: false };
  if (!value) return result;
  for (const directive of value.split(',')) {
    const [rawName = '', ...rest] = directive.split('=');
    const name = rawName.trim().toLowerCase();
    const argument = rest.join('=').trim().replace(/^"(.*)"$/, '$1');
    if (name === 'no-store') result.noStore = true;
    // no-cache with field names (`no-cache="set-cookie"`) is treated as plain no-cache: stricter.
    else if (name === 'no-cache') result.noCache = true;
    else if (name === 'must-revalidate' || name === 'proxy-revalidate') result.mustRevalidate = true;
    else if (name === 'immutable') result.immutable = true;
    else if (name === 'max-age' && /^\d+$/.test(argument)) {
      // RFC 9111 §1.2.2: delta-seconds beyond 2^31 mean 2^31.
      result.maxAgeSeconds = Math.min(Number(argument), 2 ** 31);
    }
  }
  return result;
}

/** Parses an HTTP date into epoch milliseconds; undefined when invalid. */
function parseHttpDateMs(value: string | null | undefined): number | undefined {
  if (!value) return undefined;
  const ms = Date.parse(value);
  return Number.isFinite(ms) ? ms : undefined;
}

/** Heuristic freshness (RFC 9111 §4.2.2): 10% of the time since Last-Modified, capped here. */
const HEURISTIC_FRACTION = 0.1;
const MAX_HEURISTIC_FRESHNESS_MS = 24 * 60 * 60 * 1000;

/**
 * Freshness lifetime in ms (RFC 9111 §4.2.1): max-age, else Expires minus Date, else the
 * heuristic from Last-Modified, else 0 (the entry must be revalidated before use).
 */
export function freshnessLifetimeMs(headers: HeaderLookup): number {
  const control = parseCacheControl(headers.get('cache-control'));
  if (control.maxAgeSeconds !== undefined) return control.maxAgeSeconds * 1000;
  const dateMs = parseHttpDateMs(headers.get('date'));
  const expiresHeader = headers.get('expires');
  if (expiresHeader !== null) {
    // An invalid Expires (e.g. "0") means already expired (RFC 9111 §5.3).
    const expiresMs = parseHttpDateMs(expiresHeader);
    if (expiresMs === undefined || dateMs === undefined) return 0;
    return Math.max(0, expiresMs - dateMs);
  }
  const lastModifiedMs = parseHttpDateMs(headers.get('last-modified'));
  if (lastModifiedMs !== undefined && dateMs !== undefined && dateMs > lastModifiedMs) {
    return Math.min(MAX_HEURISTIC_FRESHNESS_MS, Math.floor((dateMs - lastModifiedMs) * HEURISTIC_FRACTION));
  }
  return 0;
}

/** Age of a stored response (RFC 9111 §4.2.3, simplified): its Age header plus time stored. */
export function currentAgeMs(headers: HeaderLookup, storedAtMs: number, nowMs: number): number {
  const ageHeader = headers.get('age');
  const ageSeconds = ageHeader !== null && /^\d+$/.test(ageHeader.trim()) ? Number(ageHeader.trim()) : 0;
  return ageSeconds * 1000 + Math.max(0, nowMs - storedAtMs);
}

/** Whether a stored response may be used without asking the server first. */
export function isFresh(headers: HeaderLookup, storedAtMs: number, nowMs: number): boolean {
  const control = parseCacheControl(headers.get('cache-control'));
  if (control.noCache || control.noStore) return false;
  return currentAgeMs(headers, storedAtMs, nowMs) < freshnessLifetimeMs(headers);
}

export type StorabilityVerdict = { storable: true } | { storable: false; reason: string };

/**
 * Whether a response may enter the logical-URL cache. Deliberately narrower than RFC 9111
 * §3: only complete 200 responses, nothing that varies on request headers other than
 * Accept-Encoding (the cache is keyed by URL alone), nothing that sets cookies.
 */
export function storability(status: number, headers: HeaderLookup): StorabilityVerdict {
  if (status !== 200) return { storable: false, reason: `status ${status}` };
  const control = parseCacheControl(headers.get('cache-control'));
  if (control.noStore) return { storable: false, reason: 'Cache-Control: no-store' };
  const vary = headers.get('vary');
  if (vary !== null) {
    const fields = vary.split(',').map((field) => field.trim().toLowerCase()).filter((field) => field !== '');
    if (fields.some((field) => field !== 'accept-encoding')) return { storable: false, reason: `Vary: ${vary}` };
  }
  if (headers.get('set-cookie') !== null) return { storable: false, reason: 'Set-Cookie' };
  return { storable: true };
}

/**
 * The validator that the cache digest and the batch manifest compare: the ETag. A response
 * without one is still cached, but never listed in a digest.
 */
export function validatorOf(headers: HeaderLookup): string | undefined {
  const etag = headers.get('etag')?.trim();
  return etag ? etag : undefined;
}
