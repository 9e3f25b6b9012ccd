/** Batch transmission of embedded resources on the origin (docs/batching.md). */
export { registerBatching, type BatchSource, type BatchStats, type BatchController } from './register-batching.js';
export { batchSourceFromOrigin } from './origin-source.js';
export { batchOptionsSchema, resolveBatchOptions, type BatchOptions, type ResolvedBatchOptions } from './batch-options.js';
export { embeddedResourceUrls } from './embedded-resources.js';
export { acceptsBatch, chooseEncoding, isCompressible, type BatchEncoding } from './negotiation.js';
export { createBatchStream, type BatchPlan, type PlannedPart, type BatchStreamSettings } from './batch-stream.js';
export { injectResourceReader, partHeaders, type ResourceReader, type ResourceHead, type ResourceBody } from './resource-reader.js';
