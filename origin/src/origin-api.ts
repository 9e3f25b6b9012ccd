/**
 * What the plugin decorates the Fastify instance with: `app.webpp`, for code outside the
 * plugin. Policies (paper Section 5.2: algorithms that decide when and where to replicate)
 * use it to read the load statistics and the directory, and to create, update or delete
 * replicas from code. The plugin's own modules do not use it: each is handed what it needs.
 */
import type { ReplicationDirectory } from './directory/replication-directory.js';
import type { ResolvedOptions } from './options.js';
import type { ReplicaManager } from './replicas/replica-manager.js';
import type { ReplicaStore } from './replicas/replica-store.js';
import type { LoadStats } from './stats/load-stats.js';
import type { PreprocessCache } from './bindings/preprocess-cache.js';
import type { PeerSync } from './sync/peer-sync.js';
import type { PeerState } from './sync/peer-state.js';
import type { ClientAggregates } from './client-aggregate/client-aggregates.js';
import type { LoadTable } from './replication/load-table.js';
import type { ReplicationController } from './replication/controller.js';
import type { LazyReplicas } from './lazy/lazy-replicas.js';
import type { ClientScripts } from './client-scripts.js';
import type { OriginGauges } from './stats/prometheus.js';
import type { MemoryCacheApi } from './cache/cache-api.js';

export interface WebppOrigin {
  /**
   * The options in force: webppOrigin's, resolved, with those of the opt-in features the app
   * registered from their entry points (`memoryCache*`, `batch`, `clientAggregate` and its
   * settings, `autoReplicate` and the replication settings).
   */
  readonly options: ResolvedOptions;
  /** Folder holding the persisted directory and the replica store. */
  readonly dataDir: string;
  readonly directory: ReplicationDirectory;
  readonly store: ReplicaStore;
  /** Replica management (create / update / delete) with filters, usable from code. */
  readonly replicas: ReplicaManager;
  readonly stats: LoadStats;
  /** The pre-processing cache (pages' bindings and injected bodies, by validator). */
  readonly preprocessCache: PreprocessCache;
  /** The memory cache and its explicit API: put, invalidate, query (docs/origin.md, "Memory cache"). */
  readonly cache: MemoryCacheApi;
  /** Directory propagation; undefined when no peers are configured. */
  readonly sync: PeerSync | undefined;
  /**
   * Peers' load records and liveness (`livePeers()`, `onPeerDown`, `registerField`);
   * undefined when no peers are configured.
   */
  readonly peerState: PeerState | undefined;
  /** This server's load over the sliding window (per resource and in total). */
  readonly loadTable: LoadTable;
  /**
   * Load-driven replication (`enabled` pauses it at run time; `decide()` runs one round now;
   * `stats()`); undefined unless the replication feature is on (`autoReplicate`, or
   * `@webpp/origin/replication`) on a server with peers and a cluster secret.
   */
  readonly replication: ReplicationController | undefined;
  /** Lazy fetch of automatic replicas placed here (stats(), revalidateAll() runs one T_validate round now); undefined without a cluster secret. */
  readonly lazyReplicas: LazyReplicas | undefined;
  readonly clientScripts: ClientScripts;
  /** The client aggregate for first visits (`clientAggregate`; gauges(), dump()); undefined when off. */
  readonly clientAggregate: ClientAggregates | undefined;
  /** When true every response carries `webpp-control: off` and the worker unregisters itself. */
  killSwitch: boolean;
  /** Resolves once the directory as it is now is on disk. */
  flushDirectory(): Promise<void>;
  /** Runs one anti-entropy round with every peer now (retries pending update pushes, then reconciles the replicas' versions). */
  syncNow(): Promise<void>;
  gauges(): OriginGauges;
}

declare module 'fastify' {
  interface FastifyInstance {
    webpp: WebppOrigin;
  }
}
