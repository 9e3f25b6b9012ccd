/**
 * `@webpp/origin/memory-cache`: the memory cache of responses (issue 15, docs/origin.md
 * "Memory cache") and, in a cluster, its cooperative layer (GOS: "Cooperative cache"), as a
 * plugin of its own. Register it after webppOrigin:
 *
 *   import webppMemoryCache from '@webpp/origin/memory-cache';
 *   await app.register(webppOrigin, { publicUrl, adminToken });
 *   await app.register(webppMemoryCache, { memoryCacheBytes: 64 * 1024 * 1024 });
 *
 * webppOrigin registers this same plugin for `memoryCacheBytes` > 0, with the same options.
 * It attaches the cache to `app.webpp.cache`, takes its row of the response path (hits are
 * answered after the stored replicas, fills are taken before the bindings header rewrites a
 * page), and with peers and a cluster secret joins the cluster's caches (peer routes and the
 * count reporter). With `memoryCacheBytes` 0 it adds nothing.
 */
import fp from 'fastify-plugin';
import { Type, type Static } from 'typebox';
import type { FastifyInstance } from 'fastify';
import { cacheOptionProperties } from '../options/cache-schema.js';
import { cacheClusterOptions } from '../options/cache-cluster-schema.js';
import { createLocalCache } from '../cache/create-memory-cache.js';
import { webppMemoryCache as webppMemoryCacheStep } from '../cache/cache-plugin.js';
import { createCooperativeCache, webppCooperativeCache } from '../cache/cluster/cluster-plugin.js';
import { pick } from '../options/slice.js';
import { FEATURE_PLUGIN, claimFeature, featureOptionsResolver, originPartsOf, showFeatureOptions } from './origin-context.js';

const NAME = '@webpp/origin/memory-cache';

/** The feature's options: the memory-cache rows of webppOrigin's options. */
export const memoryCacheOptionsSchema = Type.Object({ ...cacheOptionProperties, ...cacheClusterOptions }, { additionalProperties: false });
export type MemoryCacheOptions = Static<typeof memoryCacheOptionsSchema>;
const resolveMemoryCacheOptions = featureOptionsResolver(memoryCacheOptionsSchema, 'webppMemoryCache');

async function memoryCacheFeature(app: FastifyInstance, raw: MemoryCacheOptions): Promise<void> {
  const parts = originPartsOf(app, NAME);
  const options = resolveMemoryCacheOptions(raw);
  if (options.memoryCacheBytes === 0) return;
  claimFeature(parts, NAME);
  showFeatureOptions(parts, options);
  const api = parts.memoryCache;
  api.attach(createLocalCache({ ...options, memoryCacheAgingIntervalMs: parts.options.memoryCacheAgingIntervalMs }));
  await app.register(webppMemoryCacheStep, {
    api,
    isOwnEndpoint: parts.isOwnEndpoint,
    defaultTtlMs: options.memoryCacheTtlMs,
    maxEntryBytes: options.memoryCacheMaxEntryBytes,
    staticFileDigest: parts.staticFileDigest,
  });
  const cluster = pick(parts.options, [
    'publicUrl',
    'peers',
    'clusterSecret',
    'peerTimeoutMs',
    'maxClockSkewMs',
    'memoryCacheReportIntervalMs',
    'memoryCacheReportThreshold',
    'memoryCacheAgingIntervalMs',
    'memoryCacheHotShare',
    'memoryCacheHotCopies',
    'memoryCacheRecirculation',
  ]);
  const cooperative = createCooperativeCache(
    { ...cluster, memoryCacheCooperative: options.memoryCacheCooperative, memoryCacheMaxEntryBytes: options.memoryCacheMaxEntryBytes },
    api,
    parts.gossip?.state,
    parts.folder.log,
  );
  if (cooperative === undefined) return;
  parts.cooperativeCache = cooperative;
  await app.register(webppCooperativeCache, { options: pick(parts.options, ['clusterSecret', 'publicUrl', 'aliasUrls', 'maxClockSkewMs', 'maxReplicaBytes']), parts: cooperative });
}

/** The memory cache on a webpp origin (register after webppOrigin). */
const webppMemoryCache = fp(memoryCacheFeature, { ...FEATURE_PLUGIN, name: NAME });
export { webppMemoryCache, webppMemoryCache as default };
