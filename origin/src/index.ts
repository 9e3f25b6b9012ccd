/**
 * @webpp/origin — the server half of webpp (Web++ paper, Section 5): the Fastify plugin,
 * a replica server you can start in one call, their option types and error codes, and
 * batch transmission on its own. The pieces they are built from are in
 * '@webpp/origin/_private' (no semver promise).
 */
export { webppOrigin, webppOrigin as default } from './plugin.js';
export { startReplicaServer, type ReplicaServer, type ReplicaServerOptions } from './server.js';
export {
  type WebppOriginOptions,
  type CorsMode,
  type ReplicaOperation,
  type PreFilter,
  type PostFilter,
  type FilterVeto,
  type ReplicaOutcome,
  type PushOutcome,
} from './options.js';
export type { WebppOrigin } from './origin-api.js';
export type { MemoryCacheApi, CachePutOptions, CacheEntryInfo, MemoryCacheSummary } from './cache/cache-api.js';
export type { RouteCacheConfig } from './cache/cache-plugin.js';
export type { AccessCounts, CacheClusterHooks, CachedResponse, CacheEntry, InvalidationTarget, PeerCopy } from './cache/types.js';
export type { DirectoryFile, DirectoryFileEntry } from './directory/directory-file.js';
export * from './errors.js';
export { registerBatching, type BatchSource, type BatchStats, type BatchController } from './batch/register-batching.js';
export type { BatchOptions } from './batch/batch-options.js';
