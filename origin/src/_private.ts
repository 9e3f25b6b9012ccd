/**
 * @webpp/origin/_private — internals that this repository's tests, benches and tools reach
 * across packages, the Workbox way: no semver promise, may change in any release. Users
 * import from '@webpp/origin'.
 */
export { resolveOptions, pluginOptionsSchema, type ResolvedOptions } from './options.js';
export { resolveBatchOptions, batchOptionsSchema, type ResolvedBatchOptions } from './batch/batch-options.js';
export { serverOptionsSchema } from './options/server-schema.js';
/** The endpoints and headers of the protocol, for clients written in tests. */
export { WELL_KNOWN_PREFIX } from '@webpp/core';
export { REPLICAS_PREFIX, DIRECTORY_PATH } from './routes/management.js';
export { RESOLVE_PATH, HEALTH_PATH, STATS_PATH, METRICS_PATH, DIRECTORY_LISTING_PATH } from './routes/public.js';
export { SYNC_PATH } from './sync/peer-sync.js';
export { CACHE_PREFIX, CACHE_INVALIDATIONS_PATH } from './routes/cache.js';
export { PEER_REPLICAS_PATH, LOGICAL_URL_HEADER } from './replicas/replica-manager.js';
export { REPLICA_VERSION_HEADER } from './replicas/replica-version.js';
export { CLUSTER_AUTH_HEADER, signClusterRequest } from './http/auth.js';
export { clusterRequest } from './sync/cluster-client.js';
