/** Batch transmission and the logical-URL cache on the worker side (docs/batching.md). */
export { BatchClient, DEFAULT_LOGICAL_CACHE_NAME } from './batch-client.js';
export type { BatchClientOptions, BatchIO, NavigationIO, BatchCounters, BatchSnapshot } from './batch-client.js';
export { LogicalCache, LOGICAL_CACHE_INDEX_KEY } from './logical-cache.js';
export type { CacheLike, CacheDecision, LogicalCacheOptions, LogicalCacheStats } from './logical-cache.js';
export { PendingParts } from './pending-parts.js';
export type { PartOutcome } from './pending-parts.js';
export { startBatchSession } from './batch-session.js';
export type { BatchSession, BatchSessionDeps, BatchSessionResult } from './batch-session.js';
export { BatchStage, BATCH_STATE_REQUEST, installBatching, type BatchStageDeps, type InstalledBatching } from './batch-stage.js';
