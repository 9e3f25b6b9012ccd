/**
 * Canonical forms of the URLs stored in the replication directory.
 *
 * An entry's logical URL and its physical URLs are absolute http(s) URLs without a
 * fragment. A prefix (wildcard) entry is written with a trailing "*" after a "/", as in
 * the paper's "logical URL suffixes may use a wild card" (Section 2): "/images/*" maps
 * every URL below "/images/". Internally a prefix is kept without the "*".
 */

export interface UrlSpec {
  /** Absolute canonical URL; for a prefix it ends with "/" and has no "*". */
  url: string;
  prefix: boolean;
}

/** Parses an absolute (or base-relative) URL or "…/*" prefix; returns undefined when invalid. */
export function parseUrlSpec(input: string, base?: string): UrlSpec | undefined {
  const prefix = input.endsWith('/*');
  const body = prefix ? input.slice(0, -1) : input;
  if (body.includes('*')) return undefined;
  const url = canonicalUrl(body, base);
  if (url === undefined) return undefined;
  if (prefix && (url.includes('?') || !url.endsWith('/'))) return undefined;
  return { url, prefix };
}

/** Absolute http(s) URL without fragment, or undefined. */
export function canonicalUrl(input: string, base?: string): string | undefined {
  let parsed: URL;
  try {
    parsed = base === undefined ? new URL(input) : new URL(input, base);
  } catch {
    return undefined;
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') return undefined;
  if (parsed.username !== '' || parsed.password !== '') return undefined;
  parsed.hash = '';
  return parsed.href;
}

/** The origin ("scheme://host:port") of a canonical URL. */
export function originOf(url: string): string {
  return new URL(url).origin;
}

/** Formats a spec the way the directory file and the JSON listing write it. */
export function formatUrlSpec(spec: UrlSpec): string {
  return spec.prefix ? `${spec.url}*` : spec.url;
}

/**
 * Candidate prefixes of a URL for longest-prefix match, longest first: for
 * "http://a/x/y/z.jpg?q" that is "http://a/x/y/", "http://a/x/", "http://a/".
 * O(depth of the path).
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
