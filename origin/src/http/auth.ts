/**
 * Credentials (paper Section 5.2 restricts directory exchange to "servers within the same
 * administrative domain"):
 * - management calls carry the admin token: `Authorization: Bearer <token>`;
 * - server-to-server calls carry an HMAC-SHA256 signature made with the cluster secret,
 *   `webpp-cluster-auth: v2 t=<unix ms> s=<base64url signature>`, over the target origin
 *   (the peer's public origin, as the sender addresses it), the method, path and query,
 *   the timestamp, the body digest and the headers the receiver acts on (SIGNED_HEADERS:
 *   content type, replica version, logical URL; and the peer load record when one is sent). The secret never travels, a signature is only
 *   accepted within `maxClockSkewMs` of its timestamp, and only by the server it was made
 *   for: a captured call replayed to another server does not verify there.
 *   Version 1 signatures (no target origin) are refused: every server of a cluster runs
 *   the same version.
 * Every comparison is constant-time (crypto.timingSafeEqual over fixed-length digests, so
 * that neither content nor length leaks through timing).
 */
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';

export const CLUSTER_AUTH_HEADER = 'webpp-cluster-auth';
const CLUSTER_AUTH_VERSION = 'v2';
const DEFAULT_MAX_CLOCK_SKEW_MS = 5 * 60 * 1000;

export type AuthResult = { ok: true } | { ok: false; status: 401 | 403; reason: string };

/** Constant-time string equality (hashing first makes the comparison length-independent). */
function constantTimeEqual(given: string, expected: string): boolean {
  const a = createHash('sha256').update(given, 'utf8').digest();
  const b = createHash('sha256').update(expected, 'utf8').digest();
  return timingSafeEqual(a, b) && given.length === expected.length;
}

/** Checks `Authorization: Bearer <token>` against the admin token. */
export function checkBearer(authorization: string | undefined, token: string): AuthResult {
  if (authorization === undefined || authorization === '') {
    return { ok: false, status: 401, reason: 'send "Authorization: Bearer <admin token>"' };
  }
  const match = /^Bearer[ ]+([\x21-\x7e]+)\s*$/i.exec(authorization);
  if (match === null) return { ok: false, status: 401, reason: 'malformed Authorization header (expected "Bearer <token>")' };
  if (!constantTimeEqual(match[1] ?? '', token)) return { ok: false, status: 403, reason: 'wrong admin token' };
  return { ok: true };
}

/** One signed request: the origin it is sent to, its method, path + query, and body. */
interface SignedRequestParts {
  /** "scheme://host[:port]" of the server the request is addressed to (URL.origin form). */
  targetOrigin: string;
  method: string;
  pathAndQuery: string;
  body: Uint8Array;
  /** The request's headers; those named in SIGNED_HEADERS are signed (absent: empty). */
  headers?: SignedHeaderValues;
}

/**
 * Request headers whose values are signed too: the receiver acts on them (the version a
 * push carries decides whether it is stale; the logical URL and the content type are
 * stored with it), so a captured call must not be replayed with them changed.
 */
const SIGNED_HEADERS = ['content-type', 'webpp-replica-version', 'webpp-logical-url'] as const;

export type SignedHeaderValues = Partial<Record<string, string | string[] | undefined>>;

/**
 * Headers signed only when present (a line is added for each one sent): the peer load
 * record piggybacked on peer calls (sync/peer-state.ts). Adding or stripping one breaks
 * the signature; calls without them sign exactly as before.
 */
const SIGNED_WHEN_PRESENT = ['webpp-peer-state'] as const;

function headerText(value: string | string[] | undefined): string {
  return (Array.isArray(value) ? value.join(',') : (value ?? '')).trim();
}

function signedHeaderLines(headers: SignedHeaderValues | undefined): string {
  const lines = SIGNED_HEADERS.map((name) => `${name}:${headerText(headers?.[name])}`);
  for (const name of SIGNED_WHEN_PRESENT) if (headers?.[name] !== undefined) lines.push(`${name}:${headerText(headers[name])}`);
  return lines.join('\n');
}

function signature(secret: string, parts: SignedRequestParts, timestampMs: number): string {
  const bodyDigest = createHash('sha256').update(parts.body).digest('base64url');
  return createHmac('sha256', secret)
    .update(
      `${CLUSTER_AUTH_VERSION}\n${parts.targetOrigin}\n${parts.method.toUpperCase()}\n${parts.pathAndQuery}\n${timestampMs}\n${bodyDigest}\n${signedHeaderLines(parts.headers)}`,
    )
    .digest('base64url');
}

/** The header value that authenticates one server-to-server request to `targetUrl` (absolute). */
export function signClusterRequest(
  secret: string,
  method: string,
  targetUrl: string | URL,
  body: Uint8Array,
  options: { nowMs?: number; headers?: SignedHeaderValues } = {},
): string {
  const nowMs = options.nowMs ?? Date.now();
  if (typeof targetUrl === 'string' && !/^https?:\/\//i.test(targetUrl)) {
    throw new TypeError(`signClusterRequest needs the absolute URL of the target server (its origin is signed), got ${JSON.stringify(targetUrl.slice(0, 100))}`);
  }
  const url = new URL(targetUrl);
  const parts: SignedRequestParts = { targetOrigin: url.origin, method, pathAndQuery: url.pathname + url.search, body, headers: options.headers ?? {} };
  return `${CLUSTER_AUTH_VERSION} t=${nowMs} s=${signature(secret, parts, nowMs)}`;
}

/** Parses the header and reports 401 (absent / malformed / old version) without needing the body. */
export function parseClusterAuth(header: string | undefined): { timestampMs: number; signature: string } | AuthResult {
  if (header === undefined || header === '') {
    return { ok: false, status: 401, reason: `server-to-server calls need a ${CLUSTER_AUTH_HEADER} header` };
  }
  const match = /^v2 t=(\d{1,16}) s=([A-Za-z0-9_-]{43})$/.exec(header.trim());
  if (match === null) {
    const reason = /^v1 /.test(header.trim())
      ? `${CLUSTER_AUTH_HEADER} v1 is no longer accepted: run the same webpp version on every server of the cluster`
      : `malformed ${CLUSTER_AUTH_HEADER} header`;
    return { ok: false, status: 401, reason };
  }
  return { timestampMs: Number(match[1]), signature: match[2] ?? '' };
}

/**
 * Verifies a signed server-to-server request (timestamp window, then HMAC). `ownOrigins`
 * are the origins this server answers to as a peer (its public origin first); the
 * signature must have been made for one of them.
 */
export function verifyClusterRequest(
  secret: string,
  header: string | undefined,
  request: { ownOrigins: readonly string[]; method: string; pathAndQuery: string; body: Uint8Array; headers: SignedHeaderValues },
  nowMs: number = Date.now(),
  maxClockSkewMs: number = DEFAULT_MAX_CLOCK_SKEW_MS,
): AuthResult {
  const parsed = parseClusterAuth(header);
  if ('ok' in parsed) return parsed;
  if (Math.abs(nowMs - parsed.timestampMs) > maxClockSkewMs) {
    return { ok: false, status: 403, reason: 'signature timestamp outside the allowed clock skew' };
  }
  let matched = false;
  for (const targetOrigin of request.ownOrigins) {
    const expected = signature(secret, { ...request, targetOrigin }, parsed.timestampMs);
    // Every candidate is compared (no early exit), so timing does not tell which one matched.
    if (constantTimeEqual(parsed.signature, expected)) matched = true;
  }
  if (!matched) {
    return {
      ok: false,
      status: 403,
      reason: `bad cluster signature (wrong secret, altered request, or signed for another server than ${request.ownOrigins.join(', ')})`,
    };
  }
  return { ok: true };
}
