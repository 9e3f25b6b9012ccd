/** Batch transmission of embedded resources on the origin (docs/batching.md). */
export { registerBatching, type BatchSource, type BatchController } from './register-batching.js';
export { embeddedResourceUrls } from './embedded-resources.js';
export { acceptsBatch, chooseEncoding, isCompressible } from './negotiation.js';
