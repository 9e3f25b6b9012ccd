/**
 * The objects one webpp server is made of, built once at registration from the resolved
 * options and the data folder: the replication directory (restored from disk, seeded), the
 * replica store, the statistics, the peer machinery and the state of each feature. The
 * response path (response-path.ts) and the endpoints (endpoints.ts) each take from here the
 * few parts they need; `app.webpp` (origin-api.ts) exposes them to code outside the plugin.
 */
import { join, resolve } from 'node:path';
import * as Y from 'yjs';
import type { ResolvedOptions } from '../options.js';
import { ReplicationDirectory } from '../directory/replication-directory.js';
import { DirectoryStore } from '../directory/directory-store.js';
import { applySeed } from '../directory/seed.js';
import { ReplicaStore } from '../replicas/replica-store.js';
import { ReplicaManager } from '../replicas/replica-manager.js';
import { DEFAULT_MAX_TOMBSTONES, DEFAULT_TOMBSTONE_MAX_AGE_MS, Tombstones } from '../replicas/tombstones.js';
import { LoadStats } from '../stats/load-stats.js';
import { PreprocessCache } from '../bindings/preprocess-cache.js';
import { PeerSync } from '../sync/peer-sync.js';
import { createPeerGossip, type PeerGossip } from '../sync/peer-gossip.js';
import { LoadTable } from '../replication/load-table.js';
import { ReplicationController } from '../replication/controller.js';
import { createUtilisation } from '../stats/utilisation.js';
import { createMemoryCache } from '../cache/create-memory-cache.js';
import { createCooperativeCache, type CooperativeCacheParts } from '../cache/cluster/cluster-plugin.js';
import { ClientScripts } from '../client-scripts.js';
import { ContentDigests } from '../bindings/content-digests.js';
import { FileDigests } from '../bindings/file-digests.js';
import { staticFileOf } from '../bindings/local-resource.js';
import { ResourceSizes } from '../bindings/resource-sizes.js';
import { BindingsHeaders } from '../http/bindings-headers.js';
import { KillSwitch } from '../http/kill-switch.js';
import { ownEndpointTest } from '../http/request-paths.js';
import { UrlResolutions } from '../http/url-resolutions.js';
import { LazyReplicas } from '../lazy/lazy-replicas.js';
import type { OriginGauges } from '../stats/prometheus.js';
import { PushState } from '../push/push-state.js';
import { createClientAggregates } from '../client-aggregate/client-aggregate-plugin.js';
import type { ClientAggregates } from '../client-aggregate/client-aggregates.js';
import type { MemoryCacheApi } from '../cache/cache-api.js';
import type { DataFolder } from './data-folder.js';

const DIRECTORY_STATE_FILE = 'directory.ywebpp';
const REPLICA_STORE_FOLDER = 'replicas';
const TOMBSTONES_FOLDER = 'replicas/tombstones';
/** Hot resources listed in this server's load record. */
const HOT_RESOURCES_IN_RECORD = 16;

export interface OriginParts {
  options: ResolvedOptions;
  folder: DataFolder;
  doc: Y.Doc;
  directoryStore: DirectoryStore;
  directory: ReplicationDirectory;
  store: ReplicaStore;
  replicas: ReplicaManager;
  stats: LoadStats;
  preprocessCache: PreprocessCache;
  memoryCache: MemoryCacheApi;
  cooperativeCache: CooperativeCacheParts | undefined;
  utilisation: ReturnType<typeof createUtilisation>;
  loadTable: LoadTable;
  gossip: PeerGossip | undefined;
  replication: ReplicationController | undefined;
  lazyReplicas: LazyReplicas;
  sync: PeerSync | undefined;
  push: PushState;
  clientAggregate: ClientAggregates | undefined;
  killSwitch: KillSwitch;
  clientScripts: ClientScripts;
  resolutions: UrlResolutions;
  isOwnEndpoint: (url: string) => boolean;
  headers: BindingsHeaders;
  /** SHA-256 of a static file under contentRoot as it is now (with contentDigests), for the memory cache's copies. */
  staticFileDigest: ((url: string) => Promise<string | undefined>) | undefined;
  flushDirectory: () => Promise<void>;
  gauges: () => OriginGauges;
}

export async function buildParts(options: ResolvedOptions, folder: DataFolder): Promise<OriginParts> {
  const { dataDir, log } = folder;
  const doc = new Y.Doc();
  const directoryStore = new DirectoryStore(join(dataDir, DIRECTORY_STATE_FILE));
  const restored = await directoryStore.load(doc);
  const directory = new ReplicationDirectory(doc);
  if (!restored) await directoryStore.save(doc);
  const seedChanges = await applySeed(directory, options, dataDir, () => directoryStore.save(doc));
  directoryStore.attach(doc);
  log.info(
    { dataDir, restored, seedAdded: seedChanges.added, seedRemoved: seedChanges.removed, directoryPairs: directory.size, directoryVersion: directory.version },
    restored ? 'webpp replication directory restored' : 'webpp replication directory created',
  );

  const store = new ReplicaStore(join(dataDir, REPLICA_STORE_FOLDER), log);
  await store.open();
  const tombstones = new Tombstones(join(dataDir, TOMBSTONES_FOLDER), log, {
    maxCount: DEFAULT_MAX_TOMBSTONES,
    maxAgeMs: Math.max(DEFAULT_TOMBSTONE_MAX_AGE_MS, 2 * options.maxClockSkewMs),
  });
  await tombstones.open();
  const preprocessCache = new PreprocessCache(options.preprocessCacheBytes);
  directory.onChange(() => preprocessCache.clear());
  const memoryCache = createMemoryCache(options);
  const stats = new LoadStats({ ewmaWeight: options.statsEwmaWeight, rateHalfLifeMs: options.statsRateHalfLifeMs, maxResources: options.statsMaxResources });
  // One meter of this server's busy share: pushed in Server-Timing `util`, and replication's
  // `utilisation` metric (0 while the server cannot tell: see stats/utilisation.ts).
  const utilisation = createUtilisation(options);
  const meter = utilisation.meter;
  const loadTable = new LoadTable({ stats, windowMs: options.replicationWindowMs, buckets: 6, utilisation: () => meter.current() ?? 0 });
  const gossip = createPeerGossip(options, () => loadTable.ownLoad(HOT_RESOURCES_IN_RECORD), log);
  const replication = gossip === undefined ? undefined : new ReplicationController({ options, directory, loadTable, peerState: gossip.state, log });
  const flushDirectory = (): Promise<void> => directoryStore.flush();
  const replicas = new ReplicaManager({ options, directory, flushDirectory, store, tombstones, log });
  const lazyReplicas = new LazyReplicas({ options, directory, store, replicas, log });
  const sync =
    options.peers.length > 0 && options.clusterSecret !== undefined
      ? new PeerSync({
          doc,
          peers: options.peers,
          secret: options.clusterSecret,
          intervalMs: options.syncIntervalMs,
          timeoutMs: options.peerTimeoutMs,
          log,
          piggyback: gossip?.piggyback,
        })
      : undefined;
  const cooperativeCache = createCooperativeCache(options, memoryCache, gossip?.state, log);
  const push = new PushState(options, gossip, utilisation);
  const clientAggregate = createClientAggregates(options);
  const killSwitch = new KillSwitch(options.killSwitch);
  const clientScripts = new ClientScripts(options.clientBundleDir);
  const gauges = (): OriginGauges => ({
    directoryVersion: directory.version,
    directoryPairs: directory.size,
    storedReplicas: store.size,
    preprocessCacheHits: preprocessCache.hits,
    preprocessCacheMisses: preprocessCache.misses,
    preprocessCacheBytes: preprocessCache.bytes,
    memoryCache: memoryCache.summary(),
    cacheCluster: cooperativeCache?.cooperative.snapshot(),
    peers: sync?.peerStatus() ?? [],
    push: push.gauges(),
    replication: gossip === undefined || replication === undefined ? undefined : { peers: gossip.state.peerLiveness(), decisions: replication.stats() },
    lazyReplication: lazyReplicas.stats(),
    clientAggregate: clientAggregate?.gauges(Date.now()),
  });

  // The files as they are now: what content digests announce and static copies in memory follow (issue 25 §2).
  const fileDigests = new FileDigests();
  const contentRoot = options.contentRoot === undefined ? undefined : resolve(options.contentRoot);
  const staticFileDigest =
    contentRoot === undefined || !options.contentDigests
      ? undefined
      : async (url: string): Promise<string | undefined> => {
          const file = staticFileOf(contentRoot, url);
          return file === undefined ? undefined : fileDigests.digestOf(file);
        };
  const headers = new BindingsHeaders({
    cache: preprocessCache,
    settings: {
      directory,
      maxBindingsHeaderBytes: options.maxBindingsHeaderBytes,
      // Injected tags turn on the worker's add-ons (@webpp/sw addons.ts) that this origin's options feed.
      injectScriptPath: options.injectScript ? `${options.scriptPath}${workerFeaturesQuery(options)}` : undefined,
      // Body sizes of exact bindings (docs/protocol.md, "Binding sizes").
      sizes: new ResourceSizes({ publicUrl: options.publicUrl, contentRoot: options.contentRoot, directory, store }),
    },
    digests: options.contentDigests
      ? new ContentDigests({ publicUrl: options.publicUrl, contentRoot: options.contentRoot, directory, store, files: fileDigests })
      : undefined,
  });

  return {
    options,
    folder,
    doc,
    directoryStore,
    directory,
    store,
    replicas,
    stats,
    preprocessCache,
    memoryCache,
    cooperativeCache,
    utilisation,
    loadTable,
    gossip,
    replication,
    lazyReplicas,
    sync,
    push,
    clientAggregate,
    killSwitch,
    clientScripts,
    resolutions: new UrlResolutions(directory, options.publicUrl),
    isOwnEndpoint: ownEndpointTest(options),
    headers,
    staticFileDigest,
    flushDirectory,
    gauges,
  };
}

/**
 * The worker's opt-in add-ons this origin's options feed, as the query of the injected script
 * tag: batch transmission, content digests (the worker's integrity checks) and the client
 * aggregate. Empty when none is on.
 */
function workerFeaturesQuery(options: { batch?: unknown; contentDigests?: boolean; clientAggregate?: boolean }): string {
  const features = [...(options.batch === false ? [] : ['batch']), ...(options.contentDigests ? ['integrity'] : []), ...(options.clientAggregate ? ['aggregate'] : [])];
  return features.length === 0 ? '' : `?features=${features.join(',')}`;
}
