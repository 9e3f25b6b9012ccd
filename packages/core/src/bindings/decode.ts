import { decodeBase64Url } from '../_private/base64url.js';
import { canonicalUrlOnOrigin, parseHttpUrl } from '../_private/whatwg-url.js';
import type { Binding, BindingsDocument, BindingsErrorCode, ContentDigest, DecodeOptions, DecodeResult } from '../types.js';
import {
  BINDINGS_FORMAT_VERSION,
  DEFAULT_DECODE_MAX_BYTES,
  DEFAULT_MAX_INFLATED_BYTES,
  FLAG_PREFIX,
  isSha256Integrity,
  MAX_VALIDATOR_LENGTH,
  VALIDATOR_PATTERN,
} from './format.js';
import { inflateRawNative, inflateRawSync } from './inflate.js';
import type { InflateResult } from './inflate.js';

/** Thrown internally and turned into `{ ok: false }`: decodeBindings itself never throws. */
class DecodeFailure {
  constructor(
    readonly code: BindingsErrorCode,
    readonly message: string,
  ) {}
}

function reject(code: BindingsErrorCode, message: string): never {
  throw new DecodeFailure(code, message);
}

const ENVELOPE = /^(\d{1,9})\.([a-z])\.(\d{1,9})\.(.*)$/s;
/** What is left of an envelope cut before its payload: "1", "1.", "1.z", "1.z.", "1.z.12". */
const ENVELOPE_PREFIX = /^\d+(?:\.(?:[a-z](?:\.\d*)?)?)?$/;
const HEADER_SAFE = /^[\x21-\x7e]*$/;

/**
 * Decodes a bindings header value (docs/protocol.md). Never throws: malformed, truncated,
 * oversized, badly compressed or unknown-version input yields `{ ok: false, error }` with a
 * BindingsErrorCode, and the caller simply ignores the header.
 */
export function decodeBindings(value: string | null | undefined, options: DecodeOptions = {}): DecodeResult {
  try {
    const envelope = openEnvelope(value, options);
    const json = envelope.compressed === undefined ? envelope.json : inflatedJson(inflateRawSync(envelope.compressed, envelope.jsonLength));
    return { ok: true, document: documentOf(json, envelope.jsonLength) };
  } catch (error) {
    return failureOf(error);
  }
}

/**
 * decodeBindings with the platform's inflater (DecompressionStream), for a bundle that should
 * not carry one (the worker): the same format, checks and error codes. The result comes at
 * once when there is nothing to inflate (an uncompressed or invalid value), else as a promise.
 */
export function decodeBindingsNative(value: string | null | undefined, options: DecodeOptions = {}): DecodeResult | Promise<DecodeResult> {
  let compressed: Uint8Array;
  let jsonLength: number;
  try {
    const envelope = openEnvelope(value, options);
    if (envelope.compressed === undefined) return { ok: true, document: documentOf(envelope.json, envelope.jsonLength) };
    ({ compressed, jsonLength } = envelope);
  } catch (error) {
    return failureOf(error);
  }
  return inflateRawNative(compressed, jsonLength).then((inflated): DecodeResult => {
    try {
      return { ok: true, document: documentOf(inflatedJson(inflated), jsonLength) };
    } catch (error) {
      return failureOf(error);
    }
  });
}

/** A rejection as `{ ok: false }`: decoding never throws. */
function failureOf(error: unknown): DecodeResult {
  if (error instanceof DecodeFailure) return { ok: false, error: { code: error.code, message: error.message } };
  // Anything else (e.g. a stack overflow in JSON.parse) is still malformed input.
  return { ok: false, error: { code: 'MALFORMED', message: `bindings header rejected: ${String(error)}` } };
}

/** The envelope "version.encoding.length.payload", opened: the JSON text, or the compressed bytes. */
interface Envelope {
  jsonLength: number;
  json: string;
  /** The payload's deflate-raw bytes, for encoding "z". */
  compressed?: Uint8Array;
}

function openEnvelope(value: string | null | undefined, options: DecodeOptions): Envelope {
  const maxBytes = options.maxBytes ?? DEFAULT_DECODE_MAX_BYTES;
  const maxInflatedBytes = options.maxInflatedBytes ?? DEFAULT_MAX_INFLATED_BYTES;
  if (typeof value !== 'string') reject('EMPTY', 'no bindings header');
  if (value.length > maxBytes) reject('TOO_LARGE', `bindings header of ${value.length} bytes exceeds ${maxBytes}`);
  const text = value.trim();
  if (text === '') reject('EMPTY', 'empty bindings header');
  if (!HEADER_SAFE.test(text)) reject('MALFORMED', 'bindings header has characters outside visible ASCII');

  const versionText = /^\d+/.exec(text)?.[0];
  if (versionText === undefined) reject('MALFORMED', 'bindings header does not start with a format version');
  if (Number(versionText) !== BINDINGS_FORMAT_VERSION) {
    reject('UNSUPPORTED_VERSION', `bindings format version ${versionText}, not ${BINDINGS_FORMAT_VERSION}`);
  }
  const match = ENVELOPE.exec(text);
  if (!match) {
    const cutShort = ENVELOPE_PREFIX.test(text);
    reject(cutShort ? 'TRUNCATED' : 'MALFORMED', 'bindings header is not "version.encoding.length.payload"');
  }
  const [, , encoding, lengthText, payload] = match as unknown as [string, string, string, string, string];
  const jsonLength = Number(lengthText);
  if (jsonLength > maxInflatedBytes) {
    reject('TOO_LARGE', `bindings payload of ${jsonLength} bytes exceeds ${maxInflatedBytes}`);
  }
  if (encoding === 'j') return { jsonLength, json: payload };
  if (encoding !== 'z') reject('UNSUPPORTED_VERSION', `unknown payload encoding "${encoding}"`);
  // base64url(deflate-raw): the inflater stops as soon as the output passes the declared length.
  const bytes = decodeBase64Url(payload);
  if (bytes === 'truncated') reject('TRUNCATED', 'compressed payload has a bad base64url length');
  if (bytes === 'invalid') reject('BAD_COMPRESSION', 'compressed payload is not base64url');
  return { jsonLength, json: '', compressed: bytes };
}

/** The inflated payload as JSON text: printable ASCII only. */
function inflatedJson(inflated: InflateResult): string {
  if (!inflated.ok) {
    if (inflated.reason === 'overflow') reject('MALFORMED', `compressed payload ${inflated.message}, beyond its declared length`);
    if (inflated.reason === 'truncated') reject('TRUNCATED', 'compressed payload ends early');
    reject('BAD_COMPRESSION', `compressed payload does not inflate: ${inflated.message}`);
  }
  const { bytes } = inflated;
  for (const byte of bytes) {
    if (byte > 0x7e || byte < 0x20) reject('MALFORMED', 'payload is not printable ASCII');
  }
  let json = '';
  for (let offset = 0; offset < bytes.length; offset += 8_192) json += String.fromCharCode(...bytes.subarray(offset, offset + 8_192));
  return json;
}

/** The payload's JSON, checked against its declared length and parsed into a document. */
function documentOf(json: string, jsonLength: number): BindingsDocument {
  if (json.length < jsonLength) reject('TRUNCATED', `payload has ${json.length} of ${jsonLength} bytes`);
  if (json.length > jsonLength) reject('MALFORMED', `payload exceeds its declared ${jsonLength} bytes`);
  let wire: unknown;
  try {
    wire = JSON.parse(json);
  } catch {
    reject('MALFORMED', 'payload is not valid JSON');
  }
  return fromWire(wire);
}

function fromWire(wire: unknown): BindingsDocument {
  if (!isPlainObject(wire)) reject('MALFORMED', 'payload is not a JSON object');
  const { d: directoryVersion, s: servers, b: rows, i: digestRows, n: sizeRows } = wire;
  if (typeof directoryVersion !== 'number' || !Number.isSafeInteger(directoryVersion) || directoryVersion < 0) {
    reject('MALFORMED', '"d" must be a safe integer >= 0');
  }
  if (!Array.isArray(servers)) reject('MALFORMED', '"s" must be an array');
  if (!Array.isArray(rows)) reject('MALFORMED', '"b" must be an array');
  const origins = servers.map((server, i) => {
    const parsed = typeof server === 'string' ? parseHttpUrl(server) : undefined;
    if (!parsed || parsed.origin !== server) reject('BAD_URL', `s[${i}] is not an http(s) origin`);
    return parsed.origin;
  });
  const bindings = rows.map((row, i) => bindingFromRow(row, i, origins));
  if (sizeRows !== undefined) applySizes(sizeRows, bindings);
  const document: BindingsDocument = { directoryVersion, bindings };
  if (digestRows !== undefined) document.digests = digestsFrom(digestRows, origins);
  return document;
}

/**
 * The optional digests ("i"). An entry that is not [serverIndex, path, "sha256-…"] is left
 * out, not the header: the digests are an extension, and the bindings still apply.
 */
function digestsFrom(value: unknown, origins: string[]): ContentDigest[] {
  if (!Array.isArray(value)) return [];
  const digests: ContentDigest[] = [];
  for (const entry of value) {
    if (!Array.isArray(entry) || entry.length !== 3) continue;
    const [serverIndex, path, integrity] = entry as unknown[];
    if (!isSha256Integrity(integrity) || typeof path !== 'string' || !path.startsWith('/') || path.includes('#')) continue;
    if (typeof serverIndex !== 'number' || !Number.isInteger(serverIndex) || origins[serverIndex] === undefined) continue;
    const url = canonicalUrlOnOrigin(origins[serverIndex], path);
    if (url) digests.push({ logical: url.href, integrity });
  }
  return digests;
}

/**
 * The optional sizes ("n"): [rowIndex, sizeBytes] of exact bindings. Lenient like the
 * digests: an entry that is not a pair, names no row or a prefix row, or whose size is not a
 * safe integer >= 0 is left out; the first entry of a row counts.
 */
function applySizes(value: unknown, bindings: Binding[]): void {
  if (!Array.isArray(value)) return;
  for (const entry of value) {
    if (!Array.isArray(entry) || entry.length !== 2) continue;
    const [row, sizeBytes] = entry as unknown[];
    const binding = typeof row === 'number' && Number.isInteger(row) ? bindings[row] : undefined;
    if (binding === undefined || binding.prefix || binding.sizeBytes !== undefined) continue;
    if (typeof sizeBytes !== 'number' || !Number.isSafeInteger(sizeBytes) || sizeBytes < 0) continue;
    binding.sizeBytes = sizeBytes;
  }
}

function bindingFromRow(row: unknown, index: number, origins: string[]): Binding {
  const where = `b[${index}]`;
  if (!Array.isArray(row) || row.length < 3 || row.length > 5) reject('MALFORMED', `${where} must have 3 to 5 fields`);
  const [serverIndex, path, replicas, flags = 0, validator] = row as unknown[];
  if (typeof flags !== 'number' || !Number.isInteger(flags) || flags < 0 || flags > FLAG_PREFIX) {
    reject('MALFORMED', `${where} has unknown flags`);
  }
  const prefix = (flags & FLAG_PREFIX) !== 0;
  const logicalPath = pathField(path, `${where}[1]`);
  const logical = absoluteUrl(origins, serverIndex, logicalPath, `${where} logical URL`, prefix);
  if (!Array.isArray(replicas) || replicas.length === 0) reject('MALFORMED', `${where} has no replicas`);
  const physical = replicas.map((replica, i) => {
    const here = `${where} replica ${i}`;
    if (typeof replica === 'number') return absoluteUrl(origins, replica, logicalPath, here, prefix);
    if (!Array.isArray(replica) || replica.length !== 2) reject('MALFORMED', `${here} must be an index or [index, path]`);
    return absoluteUrl(origins, replica[0], pathField(replica[1], here), here, prefix);
  });
  const binding: Binding = { logical, prefix, replicas: physical };
  if (validator !== undefined) {
    if (typeof validator !== 'string' || validator.length > MAX_VALIDATOR_LENGTH || !VALIDATOR_PATTERN.test(validator)) {
      reject('MALFORMED', `${where} has an invalid validator`);
    }
    binding.validator = validator;
  }
  return binding;
}

function pathField(value: unknown, where: string): string {
  if (typeof value !== 'string' || !value.startsWith('/')) reject('MALFORMED', `${where} must be a path starting with "/"`);
  return value;
}

function absoluteUrl(origins: string[], serverIndex: unknown, path: string, where: string, prefix: boolean): string {
  if (typeof serverIndex !== 'number' || !Number.isInteger(serverIndex) || origins[serverIndex] === undefined) {
    reject('MALFORMED', `${where} refers to no server`);
  }
  const origin = origins[serverIndex];
  const url = path.includes('#') ? undefined : canonicalUrlOnOrigin(origin, path);
  if (!url) reject('BAD_URL', `${where} is not a valid URL`);
  if (prefix && (url.hasQuery || !url.href.endsWith('/'))) {
    reject('BAD_URL', `${where}: a prefix must end with "/", no query`);
  }
  return url.href;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
