import { strToU8 } from 'fflate';
import { decodeBase64Url, encodeBase64Url } from '../_private/base64url.js';
import { parseHttpUrl, withoutHash } from '../_private/whatwg-url.js';
import { decodeGolombRice, encodeGolombRice } from './golomb.js';
import { sha256 } from './sha256.js';

/**
 * The cache digest: which (logical URL, validator) pairs the client already holds, so that a
 * batch leaves them out (Web++ paper, Section 3.4: "the client must be able to exclude from
 * transmission the resources that are already cached"). It is a Golomb-coded set in the
 * spirit of draft-ietf-httpbis-cache-digest-05:
 *
 *   key    = SHA-256(UTF-8(logical URL without fragment) || 0x00 || UTF-8(validator))
 *   h      = the first 48 bits of key, as an integer
 *   N      = the entry count rounded up to a power of two; P = 2^-p the false-positive rate
 *   value  = h >> (48 - log2(N) - p), i.e. uniform in [0, N / P)
 *   wire   = base64url(version 1 | log2(N) | p | Golomb-Rice(sorted distinct values, k = p))
 *
 * A membership test is exact for held pairs and wrong with probability <= P for others. A
 * false positive only means a resource is left out of a batch: the manifest lists what was
 * left out with the server's validator, so the client notices and fetches it on its own.
 * The default p = 8 (P = 1/256) costs about p + 1.5 = 9.5 bits per entry.
 */

const CACHE_DIGEST_VERSION = 1;
/** Default p: a false-positive rate of 2^-8 = 1/256. */
export const DEFAULT_CACHE_DIGEST_FP_LOG2 = 8;
/** Default bound on the header value the client sends, in base64url characters. */
const DEFAULT_CACHE_DIGEST_MAX_BYTES = 4096;
/** Default bound on a header value a server accepts. */
const DEFAULT_CACHE_DIGEST_DECODE_MAX_BYTES = 16 * 1024;

const HASH_BITS = 48;
const MAX_FP_LOG2 = 16;
const MAX_N_LOG2 = HASH_BITS - MAX_FP_LOG2;

export interface CacheDigestEntry {
  /** Absolute logical URL. */
  url: string;
  /** The validator held for it (its ETag), compared byte for byte. */
  validator: string;
}

export interface CacheDigestEncodeOptions {
  /** p: the false-positive rate is 2^-p, 1 <= p <= 16. Default 8. */
  falsePositiveLog2?: number;
  /** Bound on the header value length; entries are dropped from the end to fit. Default 4096. */
  maxBytes?: number;
}

export interface EncodedCacheDigest {
  /** The header value; the empty string when no entry fits (send no header then). */
  value: string;
  /** Entries encoded: a prefix of the input, which should be ordered most useful first. */
  included: number;
  /** Entries left out to stay within maxBytes. */
  dropped: number;
}

export type CacheDigestErrorCode = 'EMPTY' | 'TOO_LARGE' | 'UNSUPPORTED_VERSION' | 'MALFORMED';

export type CacheDigestDecodeResult =
  | { ok: true; digest: CacheDigest }
  | { ok: false; error: { code: CacheDigestErrorCode; message: string } };

/** The first 48 bits of the entry's SHA-256 key, as an integer (exact in a double). */
function cacheDigestHash48(url: string, validator: string): number {
  const parsed = parseHttpUrl(url);
  const normalized = parsed ? withoutHash(parsed) : url;
  const urlBytes = strToU8(normalized);
  const validatorBytes = strToU8(validator);
  const input = new Uint8Array(urlBytes.length + 1 + validatorBytes.length);
  input.set(urlBytes);
  input.set(validatorBytes, urlBytes.length + 1);
  const key = sha256(input);
  let h = 0;
  for (let i = 0; i < HASH_BITS / 8; i++) h = h * 256 + key[i]!;
  return h;
}

function valueOf(hash48: number, bits: number): number {
  return Math.floor(hash48 / 2 ** (HASH_BITS - bits));
}

function ceilLog2(n: number): number {
  let log = 0;
  while (2 ** log < n) log += 1;
  return log;
}

function checkFpLog2(p: number): number {
  if (!Number.isInteger(p) || p < 1 || p > MAX_FP_LOG2) {
    throw new RangeError(`falsePositiveLog2 must be an integer in [1, ${MAX_FP_LOG2}], got ${p}`);
  }
  return p;
}

function encodeHashes(hashes: readonly number[], p: number): string {
  const nLog2 = ceilLog2(Math.max(1, hashes.length));
  const bits = nLog2 + p;
  const values = [...new Set(hashes.map((h) => valueOf(h, bits)))].sort((a, b) => a - b);
  const body = encodeGolombRice(values, p);
  const bytes = new Uint8Array(3 + body.length);
  bytes[0] = CACHE_DIGEST_VERSION;
  bytes[1] = nLog2;
  bytes[2] = p;
  bytes.set(body, 3);
  return encodeBase64Url(bytes);
}

/**
 * Encodes entries, most useful first (e.g. most recently used), into a header value of at
 * most `maxBytes` characters, dropping entries from the end when they do not all fit.
 */
export function encodeCacheDigest(
  entries: readonly CacheDigestEntry[],
  options: CacheDigestEncodeOptions = {},
): EncodedCacheDigest {
  const p = checkFpLog2(options.falsePositiveLog2 ?? DEFAULT_CACHE_DIGEST_FP_LOG2);
  const maxBytes = options.maxBytes ?? DEFAULT_CACHE_DIGEST_MAX_BYTES;
  const limit = Math.min(entries.length, 2 ** MAX_N_LOG2);
  const hashes = entries.slice(0, limit).map((entry) => cacheDigestHash48(entry.url, entry.validator));
  const fits = (count: number): string | undefined => {
    if (count === 0) return '';
    const value = encodeHashes(hashes.slice(0, count), p);
    return value.length <= maxBytes ? value : undefined;
  };
  let value = fits(limit);
  let included = limit;
  if (value === undefined) {
    // Size grows with the count (up to the power-of-two steps of N): binary search the largest fit.
    let low = 0;
    let high = limit - 1;
    value = '';
    included = 0;
    while (low <= high) {
      const middle = Math.floor((low + high) / 2);
      const candidate = fits(middle);
      if (candidate === undefined) high = middle - 1;
      else {
        value = candidate;
        included = middle;
        low = middle + 1;
      }
    }
  }
  return { value, included, dropped: entries.length - included };
}

/** A decoded digest: answers "does the client hold this URL with this validator?". */
export class CacheDigest {
  readonly #values: Set<number>;
  readonly #bits: number;

  constructor(
    values: readonly number[],
    /** log2(N). */
    readonly nLog2: number,
    /** p: the false-positive rate is 2^-p. */
    readonly falsePositiveLog2: number,
  ) {
    this.#values = new Set(values);
    this.#bits = nLog2 + falsePositiveLog2;
  }

  /** Distinct values held (entries that collided count once). */
  get size(): number {
    return this.#values.size;
  }

  /** True if the client holds (url, validator); wrong with probability <= 2^-p when it does not. */
  has(url: string, validator: string): boolean {
    if (this.#values.size === 0) return false;
    return this.#values.has(valueOf(cacheDigestHash48(url, validator), this.#bits));
  }
}

/** Decodes a header value; never throws. A missing or empty header is `EMPTY`. */
export function decodeCacheDigest(
  value: string | null | undefined,
  options: { maxBytes?: number } = {},
): CacheDigestDecodeResult {
  const maxBytes = options.maxBytes ?? DEFAULT_CACHE_DIGEST_DECODE_MAX_BYTES;
  const reject = (code: CacheDigestErrorCode, message: string): CacheDigestDecodeResult => ({
    ok: false,
    error: { code, message },
  });
  if (typeof value !== 'string' || value.trim() === '') return reject('EMPTY', 'no cache digest');
  const text = value.trim();
  if (text.length > maxBytes) return reject('TOO_LARGE', `cache digest of ${text.length} bytes exceeds ${maxBytes}`);
  const bytes = decodeBase64Url(text);
  if (typeof bytes === 'string') return reject('MALFORMED', `cache digest is not base64url (${bytes})`);
  if (bytes.length < 3) return reject('MALFORMED', 'cache digest shorter than its 3-byte header');
  if (bytes[0] !== CACHE_DIGEST_VERSION) {
    return reject('UNSUPPORTED_VERSION', `cache digest version ${bytes[0]} is not supported`);
  }
  const nLog2 = bytes[1]!;
  const p = bytes[2]!;
  if (p < 1 || p > MAX_FP_LOG2 || nLog2 > MAX_N_LOG2) {
    return reject('MALFORMED', `cache digest parameters out of range (log2 N = ${nLog2}, p = ${p})`);
  }
  // Each value takes at least p + 1 bits, which bounds the work on hostile input.
  const maxValues = Math.min(2 ** nLog2, Math.ceil(((bytes.length - 3) * 8) / (p + 1)));
  const values = decodeGolombRice(bytes.subarray(3), p, maxValues);
  return { ok: true, digest: new CacheDigest(values, nLog2, p) };
}
