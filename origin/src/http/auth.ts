/**
 * Credentials (paper Section 5.2 restricts directory exchange to "servers within the same
 * administrative domain"):
 * - management calls carry the admin token: `Authorization: Bearer <token>`;
 * - server-to-server calls carry an HMAC-SHA256 signature made with the cluster secret,
 *   `webpp-cluster-auth: v1 t=<unix ms> s=<base64url signature>`, over the method, path,
 *   timestamp and body digest. The secret never travels, and a signature is only accepted
 *   within `maxClockSkewMs` of its timestamp.
 * Every comparison is constant-time (crypto.timingSafeEqual over fixed-length digests, so
 * that neither content nor length leaks through timing).
 */
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';

export const CLUSTER_AUTH_HEADER = 'webpp-cluster-auth';
export const DEFAULT_MAX_CLOCK_SKEW_MS = 5 * 60 * 1000;

export type AuthResult = { ok: true } | { ok: false; status: 401 | 403; reason: string };

/** Constant-time string equality (hashing first makes the comparison length-independent). */
export function constantTimeEqual(given: string, expected: string): boolean {
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

function signature(secret: string, method: string, pathAndQuery: string, timestampMs: number, body: Uint8Array): string {
  const bodyDigest = createHash('sha256').update(body).digest('base64url');
  return createHmac('sha256', secret)
    .update(`v1\n${method.toUpperCase()}\n${pathAndQuery}\n${timestampMs}\n${bodyDigest}`)
    .digest('base64url');
}

/** The header value that authenticates one server-to-server request. */
export function signClusterRequest(
  secret: string,
  method: string,
  pathAndQuery: string,
  body: Uint8Array,
  nowMs: number = Date.now(),
): string {
  return `v1 t=${nowMs} s=${signature(secret, method, pathAndQuery, nowMs, body)}`;
}

/** Parses the header and reports 401 (absent / malformed) without needing the body. */
export function parseClusterAuth(header: string | undefined): { timestampMs: number; signature: string } | AuthResult {
  if (header === undefined || header === '') {
    return { ok: false, status: 401, reason: `server-to-server calls need a ${CLUSTER_AUTH_HEADER} header` };
  }
  const match = /^v1 t=(\d{1,16}) s=([A-Za-z0-9_-]{43})$/.exec(header.trim());
  if (match === null) return { ok: false, status: 401, reason: `malformed ${CLUSTER_AUTH_HEADER} header` };
  return { timestampMs: Number(match[1]), signature: match[2] ?? '' };
}

/** Verifies a signed server-to-server request (timestamp window, then HMAC). */
export function verifyClusterRequest(
  secret: string,
  header: string | undefined,
  method: string,
  pathAndQuery: string,
  body: Uint8Array,
  nowMs: number = Date.now(),
  maxClockSkewMs: number = DEFAULT_MAX_CLOCK_SKEW_MS,
): AuthResult {
  const parsed = parseClusterAuth(header);
  if ('ok' in parsed) return parsed;
  if (Math.abs(nowMs - parsed.timestampMs) > maxClockSkewMs) {
    return { ok: false, status: 403, reason: 'signature timestamp outside the allowed clock skew' };
  }
  const expected = signature(secret, method, pathAndQuery, parsed.timestampMs, body);
  if (!constantTimeEqual(parsed.signature, expected)) return { ok: false, status: 403, reason: 'bad cluster signature' };
  return { ok: true };
}
