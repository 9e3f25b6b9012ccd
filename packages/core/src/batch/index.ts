export {
  BATCH_ACCEPT,
  BATCH_MEDIA_TYPE,
  BatchFormatError,
  CACHE_DIGEST_HEADER,
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
  encodeBatchPreamble,
  encodeEndFrame,
  encodeManifestFrame,
  encodePartFrame,
} from './encode.js';
export { BatchDecoder, readBatch } from './decode.js';
export type { ByteSource, ByteStreamReader } from './decode.js';
export {
  CacheDigest,
  DEFAULT_CACHE_DIGEST_FP_LOG2,
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
  freshnessLifetimeMs,
  parseCacheControl,
  storability,
  validatorOf,
} from './freshness.js';
export type { CacheControl, HeaderLookup, StorabilityVerdict } from './freshness.js';
export { crc32 } from './crc32.js';
export { createSha256, sha256, type Sha256 } from './sha256.js';
