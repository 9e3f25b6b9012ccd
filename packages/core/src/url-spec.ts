/**
 * Canonical URLs and URL prefixes, shared by the origin's replication directory and the
 * client's BindingsIndex so that both sides agree on what a logical URL is.
 *
 * An entry's logical URL and its physical URLs are absolute http(s) URLs without a fragment
 * or credentials. A prefix (wildcard) entry is written with a trailing "*" after a "/", as
 * in the paper's "logical URL suffixes may use a wild card" (Web++ paper, Section 2):
 * "/images/*" covers every URL below "/images/". Internally a prefix is kept without the "*".
 */
import { canonicalHttpUrl, parseHttpUrl, withoutHash } from './_private/whatwg-url.js';

export interface UrlSpec {
  /** Absolute canonical URL; for a prefix it ends with "/" and has no "*". */
  url: string;
  prefix: boolean;
}

/**
 * An absolute http(s) URL (or one relative to `base`) in canonical form: parsed by the
 * WHATWG parser, without fragment; undefined for anything else (other schemes,
 * credentials, unparsable input). Never throws.
 */
export function canonicalUrl(input: string, base?: string): string | undefined {
  if (base === undefined) return canonicalHttpUrl(input)?.href;
  const parsed = parseHttpUrl(input, base);
  return parsed === undefined ? undefined : withoutHash(parsed);
}

/** Parses an absolute (or base-relative) URL or "…/*" prefix; undefined when invalid. */
export function parseUrlSpec(input: string, base?: string): UrlSpec | undefined {
  if (typeof input !== 'string') return undefined;
  const prefix = input.endsWith('/*');
  const body = prefix ? input.slice(0, -1) : input;
  if (body.includes('*')) return undefined;
  const url = canonicalUrl(body, base);
  if (url === undefined) return undefined;
  if (prefix && (url.includes('?') || !url.endsWith('/'))) return undefined;
  return { url, prefix };
}

/** Formats a spec the way directory files and listings write it ("…/*" for a prefix). */
export function formatUrlSpec(spec: UrlSpec): string {
  return spec.prefix ? `${spec.url}*` : spec.url;
}

/**
 * Candidate prefixes of a canonical URL for longest-prefix match, longest first: for
 * "http://a/x/y/z.jpg?q" that is "http://a/x/y/", "http://a/x/", "http://a/". The query
 * is never part of a prefix. O(depth of the path).
 */
export function* prefixCandidates(url: string): Generator<string> {
  const pathStart = url.indexOf('/', url.indexOf('//') + 2);
  if (pathStart < 0) return;
  const queryStart = url.indexOf('?');
  let end = queryStart < 0 ? url.length : queryStart;
  for (;;) {
    const slash = url.lastIndexOf('/', end - 1);
    if (slash < pathStart) return;
    yield url.slice(0, slash + 1);
    end = slash;
  }
}
