/**
 * webppOrigin: the Fastify plugin that turns a web server into a Web++ server (paper
 * Section 5). Register it before (or beside) whatever serves the content:
 *
 *   await app.register(webppOrigin, { publicUrl: 'https://a.example.org', adminToken, dataDir });
 *   await app.register(fastifyStatic, { root: './public' });
 *
 * It is wrapped with fastify-plugin, so its hooks see every route of the app; its own
 * endpoints live in an encapsulated child under /.well-known/webpp/.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import fp from 'fastify-plugin';
import type { FastifyBaseLogger, FastifyInstance } from 'fastify';
import * as Y from 'yjs';
import { resolveOptions, type ResolvedOptions, type WebppOriginOptions } from './options.js';
import { ReplicationDirectory } from './directory/replication-directory.js';
import { DirectoryStore } from './directory/directory-store.js';
import { applySeed } from './directory/seed.js';
import { ReplicaStore } from './replicas/replica-store.js';
import { ReplicaManager } from './replicas/replica-manager.js';
import { DEFAULT_MAX_TOMBSTONES, DEFAULT_TOMBSTONE_MAX_AGE_MS, Tombstones } from './replicas/tombstones.js';
import { LoadStats } from './stats/load-stats.js';
import { PreprocessCache } from './bindings/preprocess-cache.js';
import { PeerSync } from './sync/peer-sync.js';
import { createPeerGossip } from './sync/peer-gossip.js';
import { LoadTable } from './replication/load-table.js';
import { ReplicationController } from './replication/controller.js';
import { createUtilisation } from './stats/utilisation.js';
import { webppPeerState } from './http/peer-state-plugin.js';
import { peerStateRoutes } from './routes/peer-state.js';
import { createMemoryCache } from './cache/create-memory-cache.js';
import { declareMemoryCacheRequest, webppMemoryCache } from './cache/cache-plugin.js';
import { cacheRoutes } from './routes/cache.js';
import { createCooperativeCache, webppCooperativeCache } from './cache/cluster/cluster-plugin.js';
import { ClientScripts } from './client-scripts.js';
import { batchSourceFromOrigin, registerBatching } from './batch/index.js';
import { ContentDigests } from './bindings/content-digests.js';
import { FileDigests } from './bindings/file-digests.js';
import { staticFileOf } from './bindings/local-resource.js';
import { ResourceSizes } from './bindings/resource-sizes.js';
import { BindingsHeaders } from './http/bindings-headers.js';
import { webppBindingsHeader } from './http/bindings-header-plugin.js';
import { webppCors } from './http/cors-plugin.js';
import { webppInjectedEtag } from './http/injected-etag.js';
import { KillSwitch, webppKillSwitch } from './http/kill-switch.js';
import { webppRecordLoad } from './http/record-load.js';
import { ownEndpointTest } from './http/request-paths.js';
import { webppStoredReplicas } from './http/stored-replicas.js';
import { webppStripRange } from './http/strip-range.js';
import { UrlResolutions } from './http/url-resolutions.js';
import type { WebppOrigin } from './origin-api.js';
import { managementRoutes } from './routes/management.js';
import { peerRoutes } from './routes/peer.js';
import { peerContentRoutes } from './routes/peer-content.js';
import { LazyReplicas } from './lazy/lazy-replicas.js';
import { webppLazyReplicas } from './http/lazy-replicas-plugin.js';
import { publicRoutes } from './routes/public.js';
import type { OriginGauges } from './stats/prometheus.js';
import { webppConcurrencyGate, webppConcurrencyGateRelease } from './http/concurrency-gate.js';
import { lockDataDir, type DataDirLock } from './directory/data-dir-lock.js';
import { PushState } from './push/push-state.js';
import { webppPush } from './push/push-plugin.js';
import { createClientAggregates, webppClientAggregate } from './client-aggregate/client-aggregate-plugin.js';
import { withDirectoryLogicalOrigin } from './directory/logical-origin.js';

const DIRECTORY_STATE_FILE = 'directory.ywebpp';
const REPLICA_STORE_FOLDER = 'replicas';
const TOMBSTONES_FOLDER = 'replicas/tombstones';
/** Hot resources listed in this server's load record. */
const HOT_RESOURCES_IN_RECORD = 16;

async function webppOriginPlugin(app: FastifyInstance, rawOptions: WebppOriginOptions): Promise<void> {
  // Without logicalOrigin, the directory file's (directory/logical-origin.ts).
  const options = resolveOptions(await withDirectoryLogicalOrigin(rawOptions));
  const temporaryDataDir = options.dataDir === undefined;
  const dataDir = options.dataDir ?? (await mkdtemp(join(tmpdir(), 'webpp-origin-')));
  const log = app.log.child({ plugin: 'webpp-origin' });
  const dataDirLock = temporaryDataDir ? undefined : await lockDataDir(dataDir, log); // one server per data folder
  try {
    await setUpOrigin(app, options, { dataDir, temporaryDataDir, log, dataDirLock });
  } catch (error) {
    await dataDirLock?.release(); // a server that failed to start leaves its folder free
    throw error;
  }
}

interface DataFolder {
  dataDir: string;
  /** True when dataDir is a temporary folder made for this server (removed at close). */
  temporaryDataDir: boolean;
  log: FastifyBaseLogger;
  dataDirLock: DataDirLock | undefined;
}

async function setUpOrigin(app: FastifyInstance, options: ResolvedOptions, { dataDir, temporaryDataDir, log, dataDirLock }: DataFolder): Promise<void> {
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
  const cache = new PreprocessCache(options.preprocessCacheBytes);
  directory.onChange(() => cache.clear());
  const memoryCache = createMemoryCache(options);
  const stats = new LoadStats({
    ewmaWeight: options.statsEwmaWeight,
    rateHalfLifeMs: options.statsRateHalfLifeMs,
    maxResources: options.statsMaxResources,
  });
  // One meter of this server's busy share: pushed in Server-Timing `util`, and replication's
  // `utilisation` metric (0 while the server cannot tell: see stats/utilisation.ts).
  const capacity = createUtilisation(options);
  const utilisation = capacity.meter;
  const loadTable = new LoadTable({ stats, windowMs: options.replicationWindowMs, buckets: 6, utilisation: () => utilisation.current() ?? 0 });
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
  const push = new PushState(options, gossip, capacity);
  const clientAggregate = createClientAggregates(options);
  const killSwitch = new KillSwitch(options.killSwitch);
  const clientScripts = new ClientScripts(options.clientBundleDir);
  const gauges = (): OriginGauges => ({
    directoryVersion: directory.version,
    directoryPairs: directory.size,
    storedReplicas: store.size,
    preprocessCacheHits: cache.hits,
    preprocessCacheMisses: cache.misses,
    preprocessCacheBytes: cache.bytes,
    memoryCache: memoryCache.summary(),
    cacheCluster: cooperativeCache?.cooperative.snapshot(),
    peers: sync?.peerStatus() ?? [],
    push: push.gauges(),
    replication: gossip === undefined || replication === undefined ? undefined : { peers: gossip.state.peerLiveness(), decisions: replication.stats() },
    lazyReplication: lazyReplicas.stats(),
    clientAggregate: clientAggregate?.gauges(Date.now()),
  });
  const api: WebppOrigin = {
    options,
    dataDir,
    directory,
    store,
    replicas,
    stats,
    preprocessCache: cache,
    cache: memoryCache,
    sync,
    peerState: gossip?.state,
    loadTable,
    replication,
    lazyReplicas,
    clientScripts,
    clientAggregate,
    get killSwitch() {
      return killSwitch.on;
    },
    set killSwitch(on: boolean) {
      killSwitch.on = on;
    },
    flushDirectory,
    async syncNow() {
      await Promise.all([sync?.syncAll(), replicas.retryPendingPushes()]);
      await replicas.reconcile();
    },
    gauges,
  };
  app.decorate('webpp', api);
  declareMemoryCacheRequest(app); // request state of the memory cache, before any route

  // The response path: one plugin per concern. Hooks of one kind run in the order the
  // plugins are registered here.
  const resolutions = new UrlResolutions(directory, options.publicUrl);
  const isOwnEndpoint = ownEndpointTest(options);
  const injecting = options.injectScript;
  // The files as they are now: what content digests announce and static copies in memory follow (issue 25 §2).
  const fileDigests = new FileDigests();
  const contentRoot = options.contentRoot === undefined ? undefined : resolve(options.contentRoot);
  const staticFileDigest = contentRoot === undefined || !options.contentDigests ? undefined : async (url: string): Promise<string | undefined> => {
    const file = staticFileOf(contentRoot, url);
    return file === undefined ? undefined : fileDigests.digestOf(file);
  };
  const headers = new BindingsHeaders({
    cache,
    settings: {
      directory,
      maxBindingsHeaderBytes: options.maxBindingsHeaderBytes,
      // Injected tags turn on the worker's add-ons (@webpp/sw addons.ts) that this origin's options feed.
      injectScriptPath: injecting ? `${options.scriptPath}${workerFeaturesQuery(options)}` : undefined,
      // Body sizes of exact bindings (docs/protocol.md, "Binding sizes").
      sizes: new ResourceSizes({ publicUrl: options.publicUrl, contentRoot: options.contentRoot, directory, store }),
    },
    digests: options.contentDigests
      ? new ContentDigests({ publicUrl: options.publicUrl, contentRoot: options.contentRoot, directory, store, files: fileDigests })
      : undefined,
  });
  await app.register(webppConcurrencyGate, { gate: push.gate }); // onRequest, first: a finite capacity (maxConcurrentRequests)
  await app.register(webppPush, { options, state: push }); // onRequest: in flight; onSend: Server-Timing, webpp-load; announces changes to peers
  await app.register(webppCors, { mode: options.cors, resolutions, isOwnEndpoint }); // onRequest: preflights; onSend: CORS headers
  await app.register(webppInjectedEtag, { injecting }); // onRequest: validators of injected pages
  await app.register(webppStripRange, { injecting }); // onRequest: no byte ranges of rewritten pages
  await app.register(webppStoredReplicas, { store }); // onRequest: stored replicas answer before any route
  await app.register(webppMemoryCache, { api: memoryCache, isOwnEndpoint, defaultTtlMs: options.memoryCacheTtlMs, maxEntryBytes: options.memoryCacheMaxEntryBytes, staticFileDigest }); // onRequest: memory hits; onSend: fills, before the body is rewritten
  await app.register(webppLazyReplicas, { lazy: lazyReplicas }); // onRequest: automatic replicas not stored yet (lazy fetch)
  await app.register(webppKillSwitch, { killSwitch }); // onSend: webpp-control: off
  await app.register(webppBindingsHeader, { headers, resolutions, killSwitch, isOwnEndpoint, maxPreprocessBytes: options.maxPreprocessBytes }); // onSend
  registerBatching(app, batchSourceFromOrigin({ options, directory, killSwitch }), options.batch); // onSend, after the bindings header: batches carry pre-processed pages
  await app.register(webppRecordLoad, { stats }); // onResponse: load statistics
  await app.register(webppPeerState, { state: gossip?.state }); // onSend: load records on peer calls
  await app.register(webppClientAggregate, { options, aggregates: clientAggregate, directory }); // onSend: webpp-aggregate; client reports (off by default)
  await app.register(webppConcurrencyGateRelease, { gate: push.gate }); // onSend, last: the slot is given back before the body's transfer

  // The origin's own endpoints, each set encapsulated.
  await app.register(publicRoutes, { options, directory, store, replicas, stats, killSwitch, sync, clientScripts, gauges });
  await app.register(managementRoutes, { options, directory, store, replicas, flushDirectory });
  await app.register(peerRoutes, { options, directory, replicas, flushDirectory });
  await app.register(peerStateRoutes, { options });
  await app.register(peerContentRoutes, { options, store, replicas });
  await app.register(cacheRoutes, { options, cache: memoryCache });
  await app.register(webppCooperativeCache, { options, parts: cooperativeCache }); // the memory caches of the cluster as one (cache/cluster/)

  app.addHook('onReady', async () => {
    utilisation.start();
    sync?.start();
    gossip?.pinger.start();
    loadTable.start();
    replication?.start();
    replicas.start();
    lazyReplicas.start();
  });
  app.addHook('onClose', async () => {
    await replicas.stop();
    await lazyReplicas.stop();
    replication?.stop();
    loadTable.stop();
    await gossip?.pinger.stop();
    utilisation.stop();
    await sync?.stop();
    await directoryStore.stop();
    doc.destroy();
    if (temporaryDataDir) await rm(dataDir, { recursive: true, force: true });
    await dataDirLock?.release();
  });
}

/** The webpp origin plugin (Fastify 5). */
export const webppOrigin = fp(webppOriginPlugin, {
  fastify: '5.x',
  name: '@webpp/origin',
});


/**
 * The worker's opt-in add-ons this origin's options feed, as the query of the injected script
 * tag: batch transmission, content digests (the worker's integrity checks) and the client
 * aggregate. Empty when none is on.
 */
function workerFeaturesQuery(options: { batch?: unknown; contentDigests?: boolean; clientAggregate?: boolean }): string {
  const features = [...(options.batch === false ? [] : ['batch']), ...(options.contentDigests ? ['integrity'] : []), ...(options.clientAggregate ? ['aggregate'] : [])];
  return features.length === 0 ? '' : `?features=${features.join(',')}`;
}
