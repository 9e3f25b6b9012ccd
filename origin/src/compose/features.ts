/**
 * The opt-in features webppOrigin registers for its own options (the all-in-one options and
 * the flags of webpp-origin): each is the same plugin an app registers from the feature's
 * entry point of @webpp/origin (features/*.ts), given its slice of the options. Off, a
 * feature is not registered, so it builds nothing and adds no hook, no endpoint and no timer.
 */
import type { FastifyInstance } from 'fastify';
import type { ResolvedOptions } from '../options.js';
import { pick } from '../options/slice.js';
import { webppMemoryCache } from '../features/memory-cache.js';
import { webppBatch } from '../features/batch.js';
import { webppClientAggregate } from '../features/client-aggregate.js';
import { REPLICATION_OPTION_NAMES, webppReplication } from '../features/replication.js';

interface OriginFeature {
  /** The entry point an app imports it from. */
  entry: string;
  /** Registers the feature when the options turn it on. */
  registerFor(app: FastifyInstance, options: ResolvedOptions): PromiseLike<unknown> | undefined;
}

export const FEATURES: readonly OriginFeature[] = [
  {
    entry: '@webpp/origin/memory-cache',
    registerFor: (app, options) =>
      options.memoryCacheBytes > 0
        ? app.register(webppMemoryCache, pick(options, ['memoryCacheBytes', 'memoryCachePolicy', 'memoryCacheTtlMs', 'memoryCacheMaxEntryBytes', 'memoryCacheCooperative']))
        : undefined,
  },
  {
    entry: '@webpp/origin/batch',
    registerFor: (app, options) => (options.batch === false ? undefined : app.register(webppBatch, options.batch === true ? {} : options.batch)),
  },
  {
    entry: '@webpp/origin/client-aggregate',
    registerFor: (app, options) =>
      options.clientAggregate ? app.register(webppClientAggregate, pick(options, ['clientReportIntervalMs', 'clientAggregateMinReports', 'clientReportsPerMinute'])) : undefined,
  },
  {
    entry: '@webpp/origin/replication',
    registerFor: (app, options) => (options.autoReplicate ? app.register(webppReplication, pick(options, REPLICATION_OPTION_NAMES)) : undefined),
  },
];
