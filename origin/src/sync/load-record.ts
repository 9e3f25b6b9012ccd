/**
 * The load record a server sends its peers (DCWS's global load table, Baker and Moon 1998,
 * Section 3.3: every server keeps a best-effort copy of every server's (Server, LoadMetric)
 * tuple, piggybacked on transfers that happen anyway). Ours carries a few metrics instead
 * of one, the server's hottest resources, and a map of named extra fields that other
 * features add (e.g. `serviceMs`, Fei et al.'s pushed service time).
 *
 * On the wire it is the `webpp-peer-state` header: base64url of the JSON record, at most
 * MAX_RECORD_HEADER_BYTES. The header is signed with the call (http/auth.ts).
 */

export const PEER_STATE_HEADER = 'webpp-peer-state';
/** Node's default limit on all request headers is 16 KiB; the record takes at most half. */
const MAX_RECORD_HEADER_BYTES = 8 * 1024;
const MAX_HOT_RESOURCES = 64;
const MAX_FIELDS = 32;
const MAX_STRING_CHARS = 2048;
const FIELD_NAME = /^[A-Za-z][A-Za-z0-9_.-]{0,63}$/;

/** One hot resource of the sender: its path there, and hits and body bytes in the load window. */
export interface HotResource {
  path: string;
  hits: number;
  bytes: number;
  /** Body size of its last response, bytes (DCWS's `Size`). */
  sizeBytes: number;
}

/** A named extra figure: a number, a short string or a boolean. */
export type LoadField = number | string | boolean;

export interface LoadRecord {
  /** The sender's public URL (its `publicUrl`). */
  server: string;
  /** Sender's clock when the record was made; strictly increasing per sender (replay guard). */
  atMs: number;
  requestsPerSecond: number;
  bytesPerSecond: number;
  /** Fraction of time the sender's event loop was busy, in [0, 1]. */
  utilisation: number;
  hot: HotResource[];
  fields: Record<string, LoadField>;
}

export function encodeLoadRecord(record: LoadRecord): string {
  let encoded = Buffer.from(JSON.stringify(record)).toString('base64url');
  // Too big: drop the coldest hot resources until it fits (the figures are kept).
  let hot = record.hot;
  while (encoded.length > MAX_RECORD_HEADER_BYTES && hot.length > 0) {
    hot = hot.slice(0, Math.floor(hot.length / 2));
    encoded = Buffer.from(JSON.stringify({ ...record, hot })).toString('base64url');
  }
  return encoded;
}

/** The record in a header value, or undefined when it is absent, too big or malformed. */
export function decodeLoadRecord(header: string | string[] | undefined): LoadRecord | undefined {
  const value = Array.isArray(header) ? header[0] : header;
  if (value === undefined || value.length > MAX_RECORD_HEADER_BYTES || !/^[A-Za-z0-9_-]+$/.test(value)) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(value, 'base64url').toString('utf8'));
  } catch {
    return undefined;
  }
  return validRecord(parsed);
}

const isFiniteNonNegative = (value: unknown): value is number => typeof value === 'number' && Number.isFinite(value) && value >= 0;
const isShortString = (value: unknown): value is string => typeof value === 'string' && value.length > 0 && value.length <= MAX_STRING_CHARS;

function validRecord(value: unknown): LoadRecord | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const record = value as Record<string, unknown>;
  const { server, atMs, requestsPerSecond, bytesPerSecond, utilisation, hot, fields } = record;
  if (!isShortString(server) || !/^https?:\/\//.test(server)) return undefined;
  if (!isFiniteNonNegative(atMs) || !isFiniteNonNegative(requestsPerSecond) || !isFiniteNonNegative(bytesPerSecond)) return undefined;
  if (!isFiniteNonNegative(utilisation) || utilisation > 1) return undefined;
  if (!Array.isArray(hot) || hot.length > MAX_HOT_RESOURCES || !hot.every(validHot)) return undefined;
  if (typeof fields !== 'object' || fields === null || Array.isArray(fields)) return undefined;
  const entries = Object.entries(fields);
  if (entries.length > MAX_FIELDS || !entries.every(([name, field]) => FIELD_NAME.test(name) && validField(field))) return undefined;
  return {
    server,
    atMs,
    requestsPerSecond,
    bytesPerSecond,
    utilisation,
    hot: (hot as HotResource[]).map(({ path, hits, bytes, sizeBytes }) => ({ path, hits, bytes, sizeBytes })),
    fields: Object.fromEntries(entries),
  };
}

function validHot(value: unknown): boolean {
  if (typeof value !== 'object' || value === null) return false;
  const { path, hits, bytes, sizeBytes } = value as Record<string, unknown>;
  return isShortString(path) && path.startsWith('/') && isFiniteNonNegative(hits) && isFiniteNonNegative(bytes) && isFiniteNonNegative(sizeBytes);
}

function validField(value: unknown): boolean {
  if (typeof value === 'boolean') return true;
  if (typeof value === 'number') return Number.isFinite(value);
  return typeof value === 'string' && value.length <= MAX_STRING_CHARS;
}

/** Whether `name` can be used as an extra field name. */
export function isFieldName(name: string): boolean {
  return FIELD_NAME.test(name);
}
