/**
 * Wire formats of the cooperative cache's peer calls, all under
 * `/.well-known/webpp/peer/cache/` and signed with the cluster secret (http/auth.ts):
 *
 *   GET  …/object?path=<path>[&home=1]   lookup: 200 + object envelope from memory, or
 *                                        404; a home's 404 may name a holder
 *                                        (`webpp-cache-holder`)
 *   POST …/object?path=<path>&n=<nonce>  a copy for this server: a fill for its home, a
 *                                        second chance (recirculation count in the envelope)
 *   POST …/counts?n=<nonce>          local access counts for their home (JSON), answered
 *                                    with the new global counts (GOS Section 4.3)
 *   POST …/invalidate?n=<nonce>      remove the copies of paths / prefixes (JSON)
 *
 * Every answer carries `webpp-cache-count`: the answering server's global count of the path.
 * An object travels as an envelope: 4 bytes (big-endian length of the meta JSON), the meta
 * JSON (status, headers, freshness, when the body was read), then the body. The envelope is
 * the request body of a push, so the signature covers all of it.
 */
import { WELL_KNOWN_PREFIX } from '@webpp/core';
import { WEBPP_ERR_BAD_BODY } from '../../errors.js';

const PEER_CACHE_PREFIX = `${WELL_KNOWN_PREFIX}peer/cache`;
export const PEER_CACHE_OBJECT_PATH = `${PEER_CACHE_PREFIX}/object`;
export const PEER_CACHE_COUNTS_PATH = `${PEER_CACHE_PREFIX}/counts`;
export const PEER_CACHE_INVALIDATE_PATH = `${PEER_CACHE_PREFIX}/invalidate`;
export const CACHE_COUNT_HEADER = 'webpp-cache-count';
export const CACHE_HOLDER_HEADER = 'webpp-cache-holder';
export const OBJECT_CONTENT_TYPE = 'application/vnd.webpp.cache-object';

/** A response held in memory, as it travels between servers. */
export interface CacheObject {
  /** Logical path (with query, if the cache keys on it). */
  path: string;
  status: number;
  /** Response headers, lower-case names (no hop-by-hop headers, never set-cookie). */
  headers: Record<string, string>;
  body: Buffer;
  /** Fresh until then (HTTP freshness of the source, or the lifetime given to the API). */
  expiresAtMs: number;
  /** When the body was read from disk or upstream (refused if an invalidation came later). */
  readAtMs: number;
  /** Age the response already had then (an upstream's Age header), in seconds. */
  initialAgeS?: number;
}

export type PushReason = 'fill' | 'second-chance';

interface EnvelopeMeta {
  status: number;
  headers: Record<string, string>;
  /** null: no lifetime (until invalidated or evicted). */
  expiresAtMs: number | null;
  readAtMs: number;
  initialAgeS?: number;
  reason?: PushReason;
  recirculation?: number;
}

const NOT_FORWARDED = new Set(['connection', 'keep-alive', 'transfer-encoding', 'set-cookie', 'content-length', 'trailer', 'upgrade']);

export function encodeObject(object: CacheObject, extra: { reason?: PushReason; recirculation?: number } = {}): Buffer {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(object.headers)) if (!NOT_FORWARDED.has(name)) headers[name] = value;
  const meta: EnvelopeMeta = {
    status: object.status,
    headers,
    expiresAtMs: Number.isFinite(object.expiresAtMs) ? object.expiresAtMs : null,
    readAtMs: object.readAtMs,
    initialAgeS: object.initialAgeS ?? 0,
    ...extra,
  };
  const metaBytes = Buffer.from(JSON.stringify(meta), 'utf8');
  const length = Buffer.alloc(4);
  length.writeUInt32BE(metaBytes.byteLength, 0);
  return Buffer.concat([length, metaBytes, object.body]);
}

const MAX_META_BYTES = 256 * 1024;

export function decodeObject(path: string, envelope: Uint8Array): CacheObject & { reason?: PushReason; recirculation: number } {
  const bytes = Buffer.from(envelope.buffer, envelope.byteOffset, envelope.byteLength);
  if (bytes.byteLength < 4) throw new WEBPP_ERR_BAD_BODY('cache object envelope too short');
  const metaLength = bytes.readUInt32BE(0);
  if (metaLength > MAX_META_BYTES || 4 + metaLength > bytes.byteLength) throw new WEBPP_ERR_BAD_BODY('cache object meta length out of range');
  let meta: unknown;
  try {
    meta = JSON.parse(bytes.subarray(4, 4 + metaLength).toString('utf8'));
  } catch {
    throw new WEBPP_ERR_BAD_BODY('cache object meta is not JSON');
  }
  const m = meta as Partial<EnvelopeMeta>;
  const headersOk = typeof m.headers === 'object' && m.headers !== null && Object.values(m.headers).every((value) => typeof value === 'string');
  if (
    typeof m.status !== 'number' ||
    !Number.isInteger(m.status) ||
    m.status < 200 ||
    m.status > 599 ||
    !headersOk ||
    (typeof m.expiresAtMs !== 'number' && m.expiresAtMs !== null) ||
    typeof m.readAtMs !== 'number' ||
    (m.initialAgeS !== undefined && (typeof m.initialAgeS !== 'number' || !(m.initialAgeS >= 0))) ||
    (m.reason !== undefined && m.reason !== 'fill' && m.reason !== 'second-chance') ||
    (m.recirculation !== undefined && (!Number.isInteger(m.recirculation) || m.recirculation < 0 || m.recirculation > 16))
  ) {
    throw new WEBPP_ERR_BAD_BODY('cache object meta has missing or invalid fields');
  }
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(m.headers as Record<string, string>)) if (!NOT_FORWARDED.has(name.toLowerCase())) headers[name.toLowerCase()] = value;
  return {
    path,
    status: m.status,
    headers,
    body: Buffer.from(bytes.subarray(4 + metaLength)),
    expiresAtMs: m.expiresAtMs ?? Number.POSITIVE_INFINITY,
    readAtMs: m.readAtMs,
    initialAgeS: m.initialAgeS ?? 0,
    reason: m.reason,
    recirculation: m.recirculation ?? 0,
  };
}

/** Body of a count report: [path, hits, holds(0|1)] lines, plus the sender's counters for the cluster totals. */
export interface CountReportBody {
  entries: [string, number, 0 | 1][];
  stats?: Record<string, number>;
}

const MAX_REPORT_ENTRIES = 100_000;

export function parseCountReport(body: Uint8Array): CountReportBody {
  const value = parseJson(body) as Partial<CountReportBody>;
  const entries = value.entries;
  if (!Array.isArray(entries) || entries.length > MAX_REPORT_ENTRIES) throw new WEBPP_ERR_BAD_BODY('count report: entries must be an array');
  for (const entry of entries as unknown[]) {
    if (
      !Array.isArray(entry) ||
      typeof entry[0] !== 'string' ||
      !entry[0].startsWith('/') ||
      entry[0].length > 4096 ||
      !Number.isInteger(entry[1]) ||
      (entry[1] as number) < 0 ||
      (entry[1] as number) > 1e9 ||
      (entry[2] !== 0 && entry[2] !== 1)
    ) {
      throw new WEBPP_ERR_BAD_BODY('count report: each entry is [path, hits, 0|1]');
    }
  }
  const stats: Record<string, number> = {};
  if (typeof value.stats === 'object' && value.stats !== null) {
    for (const [name, count] of Object.entries(value.stats).slice(0, 64)) if (typeof count === 'number' && Number.isFinite(count)) stats[name] = count;
  }
  return { entries: entries, stats };
}

/** Body of an invalidation: exact paths and prefixes, and when it was made. */
export interface InvalidateBody {
  paths: string[];
  prefixes: string[];
  atMs: number;
}

export function parseInvalidate(body: Uint8Array): InvalidateBody {
  const value = parseJson(body) as Partial<InvalidateBody>;
  const list = (items: unknown): string[] => {
    if (!Array.isArray(items) || items.length > 10_000 || !items.every((item) => typeof item === 'string' && item.startsWith('/') && item.length <= 4096)) {
      throw new WEBPP_ERR_BAD_BODY('invalidate: paths and prefixes are arrays of paths starting with /');
    }
    return items as string[];
  };
  if (typeof value.atMs !== 'number' || !Number.isFinite(value.atMs)) throw new WEBPP_ERR_BAD_BODY('invalidate: atMs must be a number');
  return { paths: list(value.paths ?? []), prefixes: list(value.prefixes ?? []), atMs: value.atMs };
}

function parseJson(body: Uint8Array): unknown {
  try {
    const value: unknown = JSON.parse(Buffer.from(body.buffer, body.byteOffset, body.byteLength).toString('utf8'));
    if (typeof value !== 'object' || value === null) throw new Error('not an object');
    return value;
  } catch {
    throw new WEBPP_ERR_BAD_BODY('expected a JSON object');
  }
}
