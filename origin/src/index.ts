/**
 * @webpp/origin — the server half of webpp (Web++ paper, Section 5): a Fastify plugin,
 * a replica server you can start in one call, and the pieces they are built from.
 */
export { webppOrigin, webppOrigin as default, DIRECTORY_STATE_FILE, REPLICA_STORE_FOLDER } from './plugin.js';
export { startReplicaServer, type ReplicaServer, type ReplicaServerOptions } from './server.js';
export {
  resolveOptions,
  pluginOptionsSchema,
  type WebppOriginOptions,
  type ResolvedOptions,
  type CorsMode,
  type ReplicaOperation,
  type PreFilter,
  type PostFilter,
  type FilterVeto,
  type ReplicaOutcome,
  type PushOutcome,
} from './options.js';
export { WELL_KNOWN_PREFIX, type WebppOrigin } from './state.js';
export * from './errors.js';

export { ReplicationDirectory, computeVersion, type DirectoryEntry, type DirectoryMatch } from './directory/replication-directory.js';
export { DirectoryStore, encodeDirectoryFile, decodeDirectoryFile } from './directory/directory-store.js';
export {
  readDirectoryFile,
  directoryPairsFrom,
  directoryFileSchema,
  type DirectoryFile,
  type DirectoryFileEntry,
  type DirectoryPair,
} from './directory/directory-file.js';
export { canonicalUrl, parseUrlSpec, type UrlSpec } from './directory/url-spec.js';
export { writeFileAtomic } from './directory/atomic-file.js';

export { htmlReferences, cssReferenceUrls, type HtmlReferences } from './bindings/html-references.js';
export { cssReferences } from './bindings/css-references.js';
export { srcsetUrls } from './bindings/srcset.js';
export { injectScriptTag, scriptTag } from './bindings/inject-script.js';
export { preprocessBody, collectBindings, preprocessKind, type PreprocessSettings } from './bindings/preprocess.js';
export { PreprocessCache, type PreprocessResult } from './bindings/preprocess-cache.js';

export { ReplicaStore, replicaEtag, type StoredReplica } from './replicas/replica-store.js';
export { ReplicaManager, PEER_REPLICAS_PATH, LOGICAL_URL_HEADER } from './replicas/replica-manager.js';
export {
  compareVersions,
  nextVersion,
  formatVersion,
  parseVersion,
  REPLICA_VERSION_HEADER,
  type ReplicaVersion,
} from './replicas/replica-version.js';
export { KeyedMutex } from './replicas/keyed-mutex.js';

export { PeerSync, handleSyncMessages, SYNC_PATH, REMOTE_ORIGIN, type PeerStatus } from './sync/peer-sync.js';
export { clusterRequest } from './sync/cluster-client.js';
export { signClusterRequest, verifyClusterRequest, checkBearer, constantTimeEqual, CLUSTER_AUTH_HEADER } from './http/auth.js';
export { parseRange } from './http/serve-replica.js';
export { LoadStats, type LoadSnapshot, type ResourceLoad, type LoadStatsOptions } from './stats/load-stats.js';
export { toPrometheus, PROMETHEUS_CONTENT_TYPE } from './stats/prometheus.js';
export { REPLICAS_PREFIX, DIRECTORY_PATH } from './routes/management.js';
export { RESOLVE_PATH, HEALTH_PATH, STATS_PATH, METRICS_PATH, DIRECTORY_LISTING_PATH } from './routes/public.js';
export { assertCanonicalPath } from './paths.js';
export * from './batch/index.js';
