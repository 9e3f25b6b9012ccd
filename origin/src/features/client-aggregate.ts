/**
 * `@webpp/origin/client-aggregate`: the client aggregate for first visits (issue 13 §6,
 * docs/origin.md "Client aggregate") as a plugin of its own. Register it after webppOrigin:
 *
 *   import webppClientAggregate from '@webpp/origin/client-aggregate';
 *   await app.register(webppClientAggregate, { clientAggregateMinReports: 50 });
 *
 * webppOrigin registers this same plugin for `clientAggregate: true`, with the same options.
 * It adds the `webpp-aggregate` header (at its row of the response path), the endpoint the
 * workers report to, `app.webpp.clientAggregate`, and asks the worker for reports.
 */
import fp from 'fastify-plugin';
import { Type, type Static } from 'typebox';
import type { FastifyInstance } from 'fastify';
import { clientAggregateSettings } from '../options/client-aggregate-schema.js';
import { ClientAggregates } from '../client-aggregate/client-aggregates.js';
import { webppClientAggregate as webppClientAggregateStep } from '../client-aggregate/client-aggregate-plugin.js';
import { pick } from '../options/slice.js';
import { FEATURE_PLUGIN, claimFeature, featureOptionsResolver, originPartsOf, showFeatureOptions } from './origin-context.js';

const NAME = '@webpp/origin/client-aggregate';

/** The feature's options: the client-aggregate rows of webppOrigin's options, but the switch. */
export const clientAggregateOptionsSchema = Type.Object(clientAggregateSettings, { additionalProperties: false });
export type ClientAggregateOptions = Static<typeof clientAggregateOptionsSchema>;
const resolveClientAggregateOptions = featureOptionsResolver(clientAggregateOptionsSchema, 'webppClientAggregate');

async function clientAggregateFeature(app: FastifyInstance, raw: ClientAggregateOptions): Promise<void> {
  const parts = originPartsOf(app, NAME);
  claimFeature(parts, NAME);
  const options = resolveClientAggregateOptions(raw);
  showFeatureOptions(parts, { clientAggregate: true, ...options });
  const aggregates = new ClientAggregates({
    intervalMs: options.clientReportIntervalMs,
    minReports: options.clientAggregateMinReports,
    halfLifeMs: parts.options.clientAggregateHalfLifeMs, // a constant (options/internals.ts)
    reportsPerMinute: options.clientReportsPerMinute,
  });
  parts.clientAggregate = aggregates;
  parts.workerFeatures.add('aggregate');
  await app.register(webppClientAggregateStep, {
    options: { clientReportIntervalMs: options.clientReportIntervalMs, ...pick(parts.options, ['publicUrl', 'logicalOrigin']) },
    aggregates,
    directory: parts.directory,
  });
}

/** The client aggregate on a webpp origin (register after webppOrigin). */
const webppClientAggregate = fp(clientAggregateFeature, { ...FEATURE_PLUGIN, name: NAME });
export { webppClientAggregate, webppClientAggregate as default };
