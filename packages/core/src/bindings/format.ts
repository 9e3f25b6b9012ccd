/**
 * Constants of the bindings wire format (docs/protocol.md). The origin sends the bindings
 * of a response in one header instead of rewriting the HTML (Web++ paper, Section 3.3).
 */

/** Response header carrying the bindings of every logical URL the response references. */
export const BINDINGS_HEADER = 'webpp-bindings';

/** Response header by which a site controls the worker; see CONTROL_OFF. */
export const CONTROL_HEADER = 'webpp-control';

/** CONTROL_HEADER value that tells the worker to unregister itself (the kill switch). */
export const CONTROL_OFF = 'off';

/**
 * True when a CONTROL_HEADER value asks the worker to switch off: the token "off",
 * case-insensitive, surrounding whitespace ignored. Other values are reserved and ignored.
 */
export function isControlOff(value: string | null | undefined): boolean {
  return typeof value === 'string' && value.trim().toLowerCase() === CONTROL_OFF;
}

/** The format version written by this encoder, the first field of the header value. */
export const BINDINGS_FORMAT_VERSION = 1;

/** Default header budget of the encoder: 8 KiB, what common proxies accept per header. */
export const DEFAULT_MAX_HEADER_BYTES = 8 * 1024;

/** Default input bound of the decoder: generous, so that a site may raise its budget. */
export const DEFAULT_DECODE_MAX_BYTES = 64 * 1024;

/** Default bound on the decompressed JSON, so that a zip bomb cannot exhaust memory. */
export const DEFAULT_MAX_INFLATED_BYTES = 1024 * 1024;

/** Longest validator (ETag or digest) accepted. */
export const MAX_VALIDATOR_LENGTH = 256;

/** A validator is visible ASCII without spaces, like an entity tag (RFC 9110 §8.8.3). */
export const VALIDATOR_PATTERN = /^[\x21-\x7e]+$/;

/** Encodings of the payload: JSON as is, or deflate-raw + base64url. */
export type PayloadEncoding = 'j' | 'z';

/**
 * The JSON payload. `s` is the server table (origins); each row of `b` is
 * [logicalServer, logicalPath, replicas, flags?, validator?] where a replica is a server
 * index (same path as the logical URL) or [serverIndex, path]; flags bit 0 = prefix.
 */
export interface WireDocument {
  d: number;
  s: string[];
  b: WireRow[];
  /**
   * Optional content digests, each [serverIndex, logicalPath, "sha256-<base64>"]. A key of
   * its own, not a row field: decoders before digests existed ignore unknown keys, while
   * they reject rows of more than 5 fields.
   */
  i?: WireDigest[];
  /**
   * Optional body sizes of exact bindings, each [rowIndex, sizeBytes] (an index into `b`).
   * A key of its own for the same reason as `i`: older decoders ignore it.
   */
  n?: WireSize[];
}
export type WireSize = [number, number];
export type WireDigest = [number, string, string];
export type WireReplica = number | [number, string];
export type WireRow =
  | [number, string, WireReplica[]]
  | [number, string, WireReplica[], number]
  | [number, string, WireReplica[], number, string];

export const FLAG_PREFIX = 1;

/** An SRI-style SHA-256 digest: "sha256-" and the standard base64 of 32 bytes. */
const INTEGRITY_PATTERN = /^sha256-[A-Za-z0-9+/]{42}[AEIMQUYcgkosw048]=$/;

/** True for a well-formed SRI-style SHA-256 digest. */
export function isSha256Integrity(value: unknown): value is string {
  return typeof value === 'string' && INTEGRITY_PATTERN.test(value);
}
