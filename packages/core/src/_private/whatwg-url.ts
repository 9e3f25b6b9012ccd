/**
 * The WHATWG URL parser of the host (browser, worker or Node), typed locally: core compiles
 * with lib ES2022 only (no DOM, no Node types), but every runtime it targets has `URL`.
 */
export interface ParsedUrl {
  readonly href: string;
  readonly origin: string;
  readonly protocol: string;
  readonly pathname: string;
  readonly search: string;
  readonly hash: string;
  readonly username: string;
  readonly password: string;
}

type UrlConstructor = new (url: string, base?: string) => ParsedUrl;

const UrlClass = (globalThis as unknown as { URL: UrlConstructor }).URL;

/** Parses an absolute http(s) URL without credentials; undefined for anything else. Never throws. */
export function parseHttpUrl(url: string, base?: string): ParsedUrl | undefined {
  if (typeof url !== 'string') return undefined;
  try {
    const parsed = new UrlClass(url, base);
    if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') return undefined;
    return parsed.username === '' && parsed.password === '' ? parsed : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The URL without its fragment, which never reaches a server. Cuts at the first "#" of the
 * serialised URL (the parser percent-encodes any other), so an empty fragment goes too.
 */
export function withoutHash(parsed: ParsedUrl): string {
  const hashAt = parsed.href.indexOf('#');
  return hashAt < 0 ? parsed.href : parsed.href.slice(0, hashAt);
}

/** An absolute http(s) URL in canonical form, split at the end of its origin. */
export interface CanonicalUrl {
  /** The canonical URL without fragment. */
  href: string;
  origin: string;
  /** Path and query: href without the origin. */
  pathAndQuery: string;
  hasQuery: boolean;
}

const SPLIT = /^(https?:\/\/[^/?#\\]+)(\/[^#]*)?(#.*)?$/s;
// Paths and queries made only of characters the WHATWG parser leaves alone, without dot segments.
const PLAIN_PATH_AND_QUERY = /^\/[A-Za-z0-9\-._~!$&'()*+,;=:@%/]*(?:\?[A-Za-z0-9\-._~!$&()*+,;=:@%/?]*)?$/;
const DOT_SEGMENT = /\/(?:\.|%2e){1,2}(?:[/?]|$)/i;
const canonicalOrigins = new Map<string, boolean>();

function isCanonicalOrigin(origin: string): boolean {
  let known = canonicalOrigins.get(origin);
  if (known === undefined) {
    const parsed = parseHttpUrl(origin);
    known = parsed !== undefined && parsed.origin === origin && parsed.href === `${origin}/`;
    if (canonicalOrigins.size >= 256) canonicalOrigins.clear();
    canonicalOrigins.set(origin, known);
  }
  return known;
}

/** The URL from a canonical origin and a path-and-query already in canonical form; else undefined. */
function canonicalUrlIfPlain(origin: string, pathAndQuery: string): CanonicalUrl | undefined {
  if (!PLAIN_PATH_AND_QUERY.test(pathAndQuery) || DOT_SEGMENT.test(pathAndQuery)) return undefined;
  return { href: origin + pathAndQuery, origin, pathAndQuery, hasQuery: pathAndQuery.includes('?') };
}

/**
 * The URL of a path-and-query on a known canonical origin (the decoder's server table):
 * skips re-parsing the origin. Undefined when the result is not an http(s) URL on that origin.
 */
export function canonicalUrlOnOrigin(origin: string, pathAndQuery: string): CanonicalUrl | undefined {
  const fast = isCanonicalOrigin(origin) ? canonicalUrlIfPlain(origin, pathAndQuery) : undefined;
  if (fast) return fast;
  const url = canonicalHttpUrl(origin + pathAndQuery);
  return url && url.origin === origin ? url : undefined;
}

/**
 * Canonicalises an absolute http(s) URL (no credentials, fragment dropped). URLs already in
 * canonical form, the common case, skip the full parser: decoding a 200-link header parses
 * 800 URLs. Undefined for anything that is not an absolute http(s) URL. Never throws.
 */
export function canonicalHttpUrl(url: string): CanonicalUrl | undefined {
  if (typeof url !== 'string') return undefined;
  const match = SPLIT.exec(url);
  if (match && isCanonicalOrigin(match[1] as string)) {
    const fast = canonicalUrlIfPlain(match[1] as string, match[2] ?? '');
    if (fast) return fast;
  }
  const parsed = parseHttpUrl(url);
  if (!parsed) return undefined;
  const href = withoutHash(parsed);
  const pathAndQuery = href.slice(parsed.origin.length);
  return { href, origin: parsed.origin, pathAndQuery, hasQuery: pathAndQuery.includes('?') };
}
