export {
  BATCH_ACCEPT,
  BATCH_MEDIA_TYPE,
  BATCH_PREAMBLE,
  BatchFormatError,
  CACHE_DIGEST_HEADER,
  DEFAULT_MAX_META_BYTES,
  DEFAULT_MAX_PART_BYTES,
  DEFAULT_MAX_PARTS,
} from './format.js';
export type {
  BatchEnd,
  BatchErrorCode,
  BatchFrame,
  BatchManifest,
  BatchPart,
  BatchPartMeta,
  BatchReadOptions,
} from './format.js';
export {
  concatBytes,
  encodeBatch,
  encodeBatchPreamble,
  encodeEndFrame,
  encodeManifestFrame,
  encodePartFrame,
} from './encode.js';
export { BatchDecoder, readBatch } from './decode.js';
export type { ByteSource, ByteStreamReader } from './decode.js';
export {
  CACHE_DIGEST_VERSION,
  CacheDigest,
  DEFAULT_CACHE_DIGEST_DECODE_MAX_BYTES,
  DEFAULT_CACHE_DIGEST_FP_LOG2,
  DEFAULT_CACHE_DIGEST_MAX_BYTES,
  cacheDigestHash48,
  decodeCacheDigest,
  encodeCacheDigest,
} from './cache-digest.js';
export type {
  CacheDigestDecodeResult,
  CacheDigestEncodeOptions,
  CacheDigestEntry,
  CacheDigestErrorCode,
  EncodedCacheDigest,
} from './cache-digest.js';
export {
  currentAgeMs,
  freshnessLifetimeMs,
  isFresh,
  parseCacheControl,
  parseHttpDateMs,
  storability,
  validatorOf,
} from './freshness.js';
export type { CacheControl, HeaderLookup, StorabilityVerdict } from './freshness.js';
export { Crc32, crc32 } from './crc32.js';
export { sha256 } from './sha256.js';
