/**
 * Batch transmission as a plugin of its own (`webpp-batch`): registerBatching's hooks, wrapped
 * with fastify-plugin so that they see every route of the app. webppOrigin registers it only
 * with `batch` on (compose/response-path.ts); off, nothing of it is registered.
 */
import fp from 'fastify-plugin';
import type { FastifyInstance } from 'fastify';
import type { BatchOptions } from './batch-options.js';
import { registerBatching, type BatchSource } from './register-batching.js';

export interface BatchPluginOptions {
  source: BatchSource;
  batch: BatchOptions | boolean;
}

async function batchPlugin(app: FastifyInstance, { source, batch }: BatchPluginOptions): Promise<void> {
  registerBatching(app, source, batch);
}

export const webppBatch = fp(batchPlugin, { fastify: '5.x', name: 'webpp-batch' });
