/**
 * The objects one webpp server is made of, built once at registration from the resolved
 * options and the data folder: the replication directory (restored from disk, seeded), the
 * replica store, the statistics and the peer machinery. The response path (response-path.ts)
 * and the endpoints (endpoints.ts) each take from here the few parts they need; `app.webpp`
 * (origin-api.ts) exposes them to code outside the plugin. The opt-in features build their
 * own parts when they are registered (features/*.ts) and leave here what others read:
 * `memoryCache` (attached), `cooperativeCache`, `clientAggregate`, `replication`, the options
 * in force and the worker features.
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
import type { ReplicationController } from '../replication/controller.js';
import { announceReplicaLimit } from '../replication/coop-replica-limit.js';
import { createUtilisation } from '../stats/utilisation.js';
import { MemoryCacheApi } from '../cache/cache-api.js';
import type { CooperativeCacheParts } from '../cache/cluster/cluster-plugin.js';
import { reservedPathReason } from '../reserved-paths.js';
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
import type { ClientAggregates } from '../client-aggregate/client-aggregates.js';
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
  /** The cache API; off until the memory-cache feature attaches a cache. */
  memoryCache: MemoryCacheApi;
  /** Set by the memory-cache feature in a cluster. */
  cooperativeCache: CooperativeCacheParts | undefined;
  utilisation: ReturnType<typeof createUtilisation>;
  loadTable: LoadTable;
  gossip: PeerGossip | undefined;
  /** Set by the replication feature (features/replication.ts), in a cluster. */
  replication: ReplicationController | undefined;
  /** Copies of automatic replicas placed here: only in a cluster (with a cluster secret). */
  lazyReplicas: LazyReplicas | undefined;
  sync: PeerSync | undefined;
  push: PushState;
  /** Set by the client-aggregate feature. */
  clientAggregate: ClientAggregates | undefined;
  /** What `app.webpp.options` shows: webppOrigin's options, then those of each feature registered since (features/origin-context.ts). */
  optionsInForce: ResolvedOptions;
  /** The worker add-ons this origin feeds, named in the injected script's query. */
  workerFeatures: WorkerFeatures;
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
  const memoryCache = new MemoryCacheApi(undefined, (path) => reservedPathReason(path, options));
  const stats = new LoadStats({ ewmaWeight: options.statsEwmaWeight, rateHalfLifeMs: options.statsRateHalfLifeMs, maxResources: options.statsMaxResources });
  // One meter of this server's busy share: pushed in Server-Timing `util`, and replication's
  // `utilisation` metric (0 while the server cannot tell: see stats/utilisation.ts).
  const utilisation = createUtilisation(options);
  const meter = utilisation.meter;
  const loadTable = new LoadTable({ stats, windowMs: options.replicationWindowMs, buckets: 6, utilisation: () => meter.current() ?? 0 });
  const gossip = createPeerGossip(options, () => loadTable.ownLoad(HOT_RESOURCES_IN_RECORD), log);
  // A co-op tells the homes the largest replica its lazy fetch accepts, whether it decides or not.
  if (gossip !== undefined) announceReplicaLimit(gossip.state, options.maxReplicaBytes);
  const flushDirectory = (): Promise<void> => directoryStore.flush();
  const replicas = new ReplicaManager({ options, directory, flushDirectory, store, tombstones, log });
  const lazyReplicas = options.clusterSecret === undefined ? undefined : new LazyReplicas({ options, directory, store, replicas, log });
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
  const push = new PushState(options, gossip, utilisation);
  const killSwitch = new KillSwitch(options.killSwitch);
  const clientScripts = new ClientScripts(options.clientBundleDir);
  const gauges = (): OriginGauges => ({
    // Read when asked: the features set theirs after this is built.
    directoryVersion: directory.version,
    directoryPairs: directory.size,
    storedReplicas: store.size,
    preprocessCacheHits: preprocessCache.hits,
    preprocessCacheMisses: preprocessCache.misses,
    preprocessCacheBytes: preprocessCache.bytes,
    memoryCache: memoryCache.summary(),
    cacheCluster: parts.cooperativeCache?.cooperative.snapshot(),
    peers: sync?.peerStatus() ?? [],
    push: push.gauges(),
    replication: gossip === undefined ? undefined : { peers: gossip.state.peerLiveness(), decisions: parts.replication?.stats() },
    lazyReplication: lazyReplicas?.stats(),
    clientAggregate: parts.clientAggregate?.gauges(Date.now()),
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
      injectScriptPath: undefined, // set by workerFeatures below
      // Body sizes of exact bindings (docs/protocol.md, "Binding sizes").
      sizes: new ResourceSizes({ publicUrl: options.publicUrl, contentRoot: options.contentRoot, directory, store }),
    },
    digests: options.contentDigests
      ? new ContentDigests({ publicUrl: options.publicUrl, contentRoot: options.contentRoot, directory, store, files: fileDigests })
      : undefined,
  });

  const workerFeatures = new WorkerFeatures((query) => headers.setInjectScriptPath(options.injectScript ? `${options.scriptPath}${query}` : undefined));
  if (options.contentDigests) workerFeatures.add('integrity');
  const parts: OriginParts = {
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
    cooperativeCache: undefined,
    utilisation,
    loadTable,
    gossip,
    replication: undefined,
    lazyReplicas,
    sync,
    push,
    clientAggregate: undefined,
    optionsInForce: options,
    workerFeatures,
    killSwitch,
    clientScripts,
    resolutions: new UrlResolutions(directory, options.publicUrl),
    isOwnEndpoint: ownEndpointTest(options),
    headers,
    staticFileDigest,
    flushDirectory,
    gauges,
  };
  return parts;
}

/** The worker's add-ons, in the order the injected script's query names them. */
const WORKER_FEATURE_ORDER = ['batch', 'integrity', 'aggregate'] as const;
type WorkerFeature = (typeof WORKER_FEATURE_ORDER)[number];

/**
 * The worker's opt-in add-ons this origin's features feed (batch transmission, content
 * digests for the worker's integrity checks, the client aggregate), as the query of the
 * injected script tag (`/webpp.js?features=batch,aggregate`); empty when none is on. Each
 * feature adds its own when it is registered.
 */
class WorkerFeatures {
  private readonly on = new Set<WorkerFeature>();

  constructor(private readonly changed: (query: string) => void) {
    changed('');
  }

  add(feature: WorkerFeature): void {
    this.on.add(feature);
    const names = WORKER_FEATURE_ORDER.filter((name) => this.on.has(name));
    this.changed(names.length === 0 ? '' : `?features=${names.join(',')}`);
  }
}
