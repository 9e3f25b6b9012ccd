/**
 * Options of batch transmission on the origin (docs/batching.md, "Origin options"),
 * validated by JSON schema like every other @webpp/origin option.
 */
import { Ajv } from 'ajv';
import { WEBPP_ERR_BAD_OPTIONS } from '../errors.js';

export interface BatchOptions {
  /** Answer batch requests at all. Default true. */
  enabled?: boolean;
  /** Most embedded resources sent in one batch; the rest are left to the client. Default 100. */
  maxParts?: number;
  /** Resources larger than this are left out of batches (the client fetches them). Default 1 MiB. */
  maxPartBytes?: number;
  /** Stop adding resources once this many body bytes were sent. Default 16 MiB. */
  maxBatchBytes?: number;
  /** Pages larger than this are never batched. Default 5 MiB. */
  maxPageBytes?: number;
  /** Embedded resources read at the same time. Default 6. */
  concurrency?: number;
  /** 'auto' compresses when the batch holds compressible bytes; 'never'; 'always' when accepted. Default 'auto'. */
  compression?: 'auto' | 'never' | 'always';
  /** 'auto' compresses only when at least this many compressible bytes are in the batch. Default 1024. */
  minCompressibleBytes?: number;
  /**
   * 'auto' compresses only when compressible bytes (text, JSON, SVG…) are at least this share
   * of the batch: compressing JPEG/PNG/WOFF2 costs CPU and saves nothing. Default 0.25.
   */
  minCompressibleShare?: number;
  /** Longest cache digest header accepted; a longer one is ignored (everything is sent). Default 16384. */
  maxDigestBytes?: number;
}

export type ResolvedBatchOptions = Required<BatchOptions>;

export const BATCH_OPTION_DEFAULTS: ResolvedBatchOptions = {
  enabled: true,
  maxParts: 100,
  maxPartBytes: 1024 * 1024,
  maxBatchBytes: 16 * 1024 * 1024,
  maxPageBytes: 5 * 1024 * 1024,
  concurrency: 6,
  compression: 'auto',
  minCompressibleBytes: 1024,
  minCompressibleShare: 0.25,
  maxDigestBytes: 16 * 1024,
};

export const batchOptionsSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    enabled: { type: 'boolean' },
    maxParts: { type: 'integer', minimum: 0, maximum: 1000 },
    maxPartBytes: { type: 'integer', minimum: 0 },
    maxBatchBytes: { type: 'integer', minimum: 0 },
    maxPageBytes: { type: 'integer', minimum: 0 },
    concurrency: { type: 'integer', minimum: 1, maximum: 64 },
    compression: { enum: ['auto', 'never', 'always'] },
    minCompressibleBytes: { type: 'integer', minimum: 0 },
    minCompressibleShare: { type: 'number', minimum: 0, maximum: 1 },
    maxDigestBytes: { type: 'integer', minimum: 0 },
  },
} as const;

const validate = new Ajv({ allErrors: true }).compile(batchOptionsSchema);

export function resolveBatchOptions(options: BatchOptions | boolean | undefined): ResolvedBatchOptions {
  if (options === undefined || options === true) return { ...BATCH_OPTION_DEFAULTS };
  if (options === false) return { ...BATCH_OPTION_DEFAULTS, enabled: false };
  if (!validate(options)) {
    const detail = (validate.errors ?? []).map((error) => `batch${error.instancePath} ${error.message ?? ''}`).join('; ');
    throw new WEBPP_ERR_BAD_OPTIONS(detail);
  }
  return { ...BATCH_OPTION_DEFAULTS, ...options };
}
