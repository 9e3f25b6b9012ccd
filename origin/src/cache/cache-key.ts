/**
 * Cache keys: the path and query of a URL, as the browser sent them. Requests are keyed from
 * their URL; the API's paths are checked like the management API's (canonical path, with
 * an optional query), so that a key put through the API is the key a request finds.
 */
import { assertCanonicalPath } from '../paths.js';
import { WEBPP_ERR_BAD_PATH } from '../errors.js';

const MAX_QUERY_LENGTH = 2048;

/** The key of a request URL (path + query), or undefined when it does not parse. */
export function requestCacheKey(url: string): string | undefined {
  try {
    const parsed = new URL(url, 'http://webpp.invalid');
    return parsed.pathname + parsed.search;
  } catch {
    return undefined;
  }
}

/** The key of a path given to the API ("/news" or "/news?id=3"); throws WEBPP_ERR_BAD_PATH. */
export function apiCacheKey(path: string): string {
  const queryStart = path.indexOf('?');
  const pathPart = assertCanonicalPath(queryStart < 0 ? path : path.slice(0, queryStart));
  if (queryStart < 0) return pathPart;
  const query = path.slice(queryStart + 1);
  // eslint-disable-next-line no-control-regex -- control characters are what it rejects
  if (query.length > MAX_QUERY_LENGTH || /[\u0000-\u0020\u007f#]/.test(query)) {
    throw new WEBPP_ERR_BAD_PATH(JSON.stringify(path.slice(0, 200)), 'its query contains a control character, a space or a fragment, or is too long');
  }
  return query === '' ? pathPart : `${pathPart}?${query}`;
}

/** A prefix given to the API: starts with "/", no control characters, spaces or fragment. */
export function apiCachePrefix(prefix: string): string {
  // eslint-disable-next-line no-control-regex -- control characters are what it rejects
  if (!prefix.startsWith('/') || prefix.length > 1024 || /[\u0000-\u0020\u007f#]/.test(prefix)) {
    throw new WEBPP_ERR_BAD_PATH(JSON.stringify(prefix.slice(0, 200)), 'a prefix must start with "/" and contain no control character, space or fragment');
  }
  return prefix;
}
