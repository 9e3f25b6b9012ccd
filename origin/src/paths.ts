/**
 * Validation of logical paths taken from management URLs. Only canonical paths are
 * accepted: a path that a URL parser would rewrite (dot segments, encoded slashes,
 * doubled slashes, stray percent signs) is refused instead of being silently fixed, so
 * that one resource can never be reached, stored or deleted under two names.
 */
import { WEBPP_ERR_BAD_PATH } from './errors.js';

const MAX_LOGICAL_PATH_LENGTH = 2048;

/** Returns the path unchanged when it is canonical; throws WEBPP_ERR_BAD_PATH (400) otherwise. */
export function assertCanonicalPath(rawPath: string): string {
  const reject = (reason: string): never => {
    throw new WEBPP_ERR_BAD_PATH(JSON.stringify(rawPath.slice(0, 200)), reason);
  };
  if (!rawPath.startsWith('/')) reject('it must start with "/"');
  if (rawPath.length > MAX_LOGICAL_PATH_LENGTH) reject(`it is longer than ${MAX_LOGICAL_PATH_LENGTH} characters`);
  // eslint-disable-next-line no-control-regex -- control characters are what it rejects
  if (/[\u0000-\u0020\u007f\\]/.test(rawPath)) reject('it contains a control character, a space or a backslash');
  if (rawPath.includes('?') || rawPath.includes('#')) reject('it contains a query or a fragment');
  if (/%(?![0-9A-Fa-f]{2})/.test(rawPath)) reject('it contains a malformed percent escape');
  if (/%(2f|5c|00|2e)/i.test(rawPath)) reject('it contains an encoded "/", "\\", "." or NUL');
  // Browsers percent-encode a path in upper case (WHATWG URL; RFC 3986 §6.2.2.1), and URLs
  // are compared byte for byte: a replica stored as "/caf%c3%a9" (curl encodes a typed "é"
  // so) would never be asked for.
  const upperEscapes = rawPath.replace(/%[0-9A-Fa-f]{2}/g, (escape) => escape.toUpperCase());
  if (upperEscapes !== rawPath) reject(`its percent escapes must be upper case, as browsers send them (canonical form: ${upperEscapes.slice(0, 200)})`);
  if (rawPath.includes('//')) reject('it contains an empty segment ("//")');
  const segments = rawPath.split('/');
  if (segments.some((segment) => segment === '.' || segment === '..')) reject('it contains a "." or ".." segment');
  if (rawPath.includes('*')) reject('"*" is reserved for wildcard directory entries');
  let decoded: string;
  try {
    decoded = decodeURIComponent(rawPath);
  } catch {
    return reject('its percent escapes are not valid UTF-8');
  }
  // eslint-disable-next-line no-control-regex -- control characters are what it rejects
  if (/[\u0000-\u001f\u007f]/.test(decoded)) reject('it encodes a control character');
  const canonical = new URL(rawPath, 'http://webpp.invalid').pathname;
  if (canonical !== rawPath) reject(`it is not normalised (canonical form: ${canonical})`);
  return rawPath;
}

/**
 * A directory entry's URL or path ("/x", "/img/*", "https://b.example/x"), held to the same
 * rule as a management URL's path: returned unchanged when its path is canonical, else
 * WEBPP_ERR_BAD_PATH (400), so that a directory edit can never store a name other than the
 * one it was given (a CR/LF, a space, a dot segment would otherwise be silently rewritten).
 * The query, when there is one, may hold no control character, space or backslash either.
 */
export function assertCanonicalUrlSpec(raw: string): string {
  const origin = /^https?:\/\/[^/?#]*/i.exec(raw)?.[0] ?? '';
  const rest = raw.slice(origin.length);
  const queryStart = rest.indexOf('?');
  const path = queryStart < 0 ? rest : rest.slice(0, queryStart);
  const query = queryStart < 0 ? '' : rest.slice(queryStart);
  // eslint-disable-next-line no-control-regex -- control characters are what it rejects
  if (/[\u0000-\u0020\u007f\\]/.test(origin + query)) {
    throw new WEBPP_ERR_BAD_PATH(JSON.stringify(raw.slice(0, 200)), 'it contains a control character, a space or a backslash');
  }
  if (origin !== '' && path === '') return raw;
  assertCanonicalPath(path.endsWith('/*') ? path.slice(0, -1) : path);
  return raw;
}
