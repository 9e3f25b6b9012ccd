/**
 * Joins this server's memory cache (cache/memory-cache.ts, its API and hooks in
 * cache/cache-api.ts and cache/types.ts) to the cluster: the approximated global counts
 * become the cache's count source, a local miss asks the peers before the route runs, fills
 * and peer copies are placed by the cluster's rule, evictions get a second chance, and an
 * invalidation through the API reaches every server before it resolves. Also serves the
 * peer cache routes (routes/peer-cache.ts) and runs the count reporter.
 *
 * Active when the memory cache is on, `memoryCacheCooperative` is true (the default) and the
 * server has peers and a cluster secret; otherwise `createCooperativeCache` returns undefined
 * and each server's cache is its own.
 */
import fp from 'fastify-plugin';
import type { FastifyInstance } from 'fastify';
import { CooperativeCache, type LocalCache } from './cooperative-cache.js';
import { ClusterInvalidation } from './cluster-invalidation.js';
import { peerCacheRoutes } from '../../routes/peer-cache.js';
import type { CacheObject } from './peer-protocol.js';
import type { MemoryCacheApi } from '../cache-api.js';
import type { MemoryCache } from '../memory-cache.js';
import type { CacheEntry, PeerCopy } from '../types.js';
import type { ResolvedOptions } from '../../options.js';
import type { PeerState } from '../../sync/peer-state.js';

/** Pushes (fills, second chances) in flight at once; more are skipped and counted. */
const MAX_PUSHES_IN_FLIGHT = 16;

export interface CooperativeCacheParts {
  cooperative: CooperativeCache;
  invalidation: ClusterInvalidation;
}

function objectOf(entry: CacheEntry, nowMs: number): CacheObject {
  return {
    path: entry.key,
    status: 200,
    headers: entry.response.headers,
    body: entry.response.body,
    expiresAtMs: entry.expiresAtMs,
    readAtMs: entry.storedAtMs,
    initialAgeS: entry.initialAgeS + Math.max(0, Math.floor((nowMs - entry.storedAtMs) / 1000)),
  };
}

function copyOf(object: CacheObject, nowMs: number): PeerCopy {
  return { response: { headers: object.headers, body: object.body }, ttlMs: Number.isFinite(object.expiresAtMs) ? Math.max(0, object.expiresAtMs - nowMs) : undefined, initialAgeS: object.initialAgeS ?? 0 };
}

/** What the cluster layer needs of the memory cache, over MemoryCache. */
function localCacheOf(cache: MemoryCache, api: MemoryCacheApi, stored: (key: string) => void): LocalCache {
  return {
    peek: (key) => {
      const entry = cache.peek(key);
      return entry === undefined ? undefined : objectOf(entry, Date.now());
    },
    offer: (object) => {
      const copy = copyOf(object, Date.now());
      const entry = cache.store({ key: object.path, response: copy.response, source: 'peer', ttlMs: copy.ttlMs, initialAgeS: copy.initialAgeS });
      if (entry !== undefined) stored(object.path);
      return entry !== undefined;
    },
    // A peer's invalidation: removed here only (MemoryCache, not the API: no echo).
    remove: (target) => cache.invalidate(target),
    counters: () => {
      const { localHits, misses, bytesServed, evictions, stores, rejections, sizeBytes, entries } = api.summary();
      return { localHits, misses, bytesServed, evictions, stores, rejections, sizeBytes, entries };
    },
  };
}

/** What the cooperative layer is set with: the cluster's options, the GOS constants (options/internals.ts) and the cache's own. */
type CooperativeLayerOptions = Pick<
  ResolvedOptions,
  | 'publicUrl'
  | 'peers'
  | 'clusterSecret'
  | 'peerTimeoutMs'
  | 'maxClockSkewMs'
  | 'memoryCacheReportIntervalMs'
  | 'memoryCacheReportThreshold'
  | 'memoryCacheAgingIntervalMs'
  | 'memoryCacheHotShare'
  | 'memoryCacheHotCopies'
  | 'memoryCacheRecirculation'
  | 'memoryCacheCooperative'
  | 'memoryCacheMaxEntryBytes'
>;

export function createCooperativeCache(options: CooperativeLayerOptions, api: MemoryCacheApi, peerState: PeerState | undefined, log: FastifyInstance['log']): CooperativeCacheParts | undefined {
  const cache = api.local;
  if (cache === undefined || !options.memoryCacheCooperative || options.peers.length === 0 || options.clusterSecret === undefined) return undefined;
  const cooperative = new CooperativeCache({
    self: options.publicUrl,
    peers: options.peers,
    secret: options.clusterSecret,
    peerTimeoutMs: options.peerTimeoutMs,
    maxClockSkewMs: options.maxClockSkewMs,
    reportIntervalMs: options.memoryCacheReportIntervalMs,
    reportThreshold: options.memoryCacheReportThreshold,
    agingIntervalMs: options.memoryCacheAgingIntervalMs,
    hotShare: options.memoryCacheHotShare,
    hotCopies: options.memoryCacheHotCopies,
    recirculation: options.memoryCacheRecirculation,
    maxObjectBytes: options.memoryCacheMaxEntryBytes,
    maxPushesInFlight: MAX_PUSHES_IN_FLIGHT,
    liveness: peerState === undefined ? undefined : (peer) => (peerState.isLive(peer) ? undefined : false),
    log,
  });
  const invalidation = new ClusterInvalidation(cooperative);
  // A copy the cache keeps after `place` said yes: known at once, so the next report tells the home.
  const storedIfHeld = (key: string): void => {
    queueMicrotask(() => {
      if (cache.peek(key) !== undefined) cooperative.stored(key);
    });
  };
  cooperative.attach(localCacheOf(cache, api, (key) => cooperative.stored(key)));
  // Replacement ranks by the approximated global counts (GOS Section 4.3).
  cache.setAccessCounts({
    record: (key) => cooperative.recordAccess(key),
    count: (key) => cooperative.countOf(key),
    forget: () => undefined,
  });
  cache.onRemove((entry, reason) => {
    if (reason !== 'evicted') cooperative.counts.setHolds(entry.key, false, cooperative.homeOf(entry.key));
  });
  api.setHooks({
    peerLookup: async (key) => {
      const object = await cooperative.lookup(key);
      return object === undefined ? undefined : copyOf(object, Date.now());
    },
    place: (key, copy, origin) => {
      const nowMs = Date.now();
      const keep =
        origin === 'peer'
          ? cooperative.keepsCopy(key)
          : cooperative.placeFill({
              path: key,
              status: 200,
              headers: copy.response.headers,
              body: copy.response.body,
              expiresAtMs: copy.ttlMs === undefined ? Number.POSITIVE_INFINITY : nowMs + copy.ttlMs,
              readAtMs: nowMs,
              initialAgeS: copy.initialAgeS ?? 0,
            });
      if (keep) storedIfHeld(key);
      return keep;
    },
    onEvict: (entry) => cooperative.evicted(objectOf(entry, Date.now())),
    onInvalidate: async (target) => {
      const outcome = await invalidation.invalidateEverywhere(target);
      if (outcome.pending.length > 0) log.warn({ target, pending: outcome.pending }, 'webpp cache invalidation not acknowledged by every peer yet: retried until it is');
    },
  });
  peerState?.onPeerDown((peer) => cooperative.membership.markDown(peer));
  peerState?.onPeerUp((peer) => cooperative.membership.markUp(peer));
  return { cooperative, invalidation };
}

async function cooperativeCachePlugin(app: FastifyInstance, deps: { options: Pick<ResolvedOptions, 'clusterSecret' | 'publicUrl' | 'aliasUrls' | 'maxClockSkewMs' | 'maxReplicaBytes'>; parts: CooperativeCacheParts }): Promise<void> {
  const { parts, options } = deps;
  // Peer cache calls are internal traffic, one or more per cooperative miss: two request log
  // lines each at info cost about as much as the lookup (profiled); warnings and errors stay.
  await app.register(peerCacheRoutes, { options, cooperative: parts.cooperative, invalidation: parts.invalidation, logLevel: 'warn' });
  app.addHook('onReady', async () => parts.cooperative.start());
  app.addHook('onClose', async () => parts.cooperative.stop());
}

/** The cooperative cache's peer routes and reporter (registered by features/memory-cache.ts when it is active). */
export const webppCooperativeCache = fp(cooperativeCachePlugin, { fastify: '5.x', name: 'webpp-cooperative-cache' });
