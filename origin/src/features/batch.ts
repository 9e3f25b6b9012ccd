/**
 * `@webpp/origin/batch`: batch transmission (paper Section 3.4, docs/batching.md) as a
 * plugin of its own. Register it after webppOrigin:
 *
 *   import webppOrigin from '@webpp/origin';
 *   import webppBatch from '@webpp/origin/batch';
 *   await app.register(webppOrigin, { publicUrl, adminToken });
 *   await app.register(webppBatch, { maxParts: 50 });
 *
 * Its options are batchOptionsSchema's (docs/batching.md, "Origin options"). webppOrigin
 * registers this same plugin for its `batch` option. Its hooks take their row of the response
 * path (compose/response-path.ts: after the bindings header, so that the page in a batch is
 * the page a plain GET returns), and the injected script tag asks the worker for batches.
 */
import fp from 'fastify-plugin';
import type { FastifyInstance } from 'fastify';
import { resolveBatchOptions, type BatchOptions } from '../batch/batch-options.js';
import { webppBatch as webppBatchStep } from '../batch/batch-plugin.js';
import { batchSourceFromOrigin } from '../batch/origin-source.js';
import { optionPath } from '../options/compile-options.js';
import { pick } from '../options/slice.js';
import { FEATURE_PLUGIN, claimFeature, originPartsOf, showFeatureOptions } from './origin-context.js';

const NAME = '@webpp/origin/batch';

async function batchFeature(app: FastifyInstance, options: BatchOptions): Promise<void> {
  const parts = originPartsOf(app, NAME);
  claimFeature(parts, NAME);
  const batch = resolveBatchOptions(options, optionPath('webppBatch'));
  showFeatureOptions(parts, { batch });
  parts.workerFeatures.add('batch');
  const source = batchSourceFromOrigin({ options: pick(parts.options, ['publicUrl', 'cors', 'scriptPath', 'workerPath']), directory: parts.directory, killSwitch: parts.killSwitch });
  await app.register(webppBatchStep, { source, batch });
}

/** Batch transmission on a webpp origin (register after webppOrigin). */
const webppBatch = fp(batchFeature, { ...FEATURE_PLUGIN, name: NAME });
export { webppBatch, webppBatch as default };
export type { BatchOptions } from '../batch/batch-options.js';
