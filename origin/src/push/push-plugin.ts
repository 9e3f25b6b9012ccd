/**
 * Server push (issue 13), as one plugin: the Server-Timing and webpp-load headers on every
 * response (push-headers-plugin.ts), the signed peer endpoint that receives the peers'
 * values (peer-load-routes.ts), and the exchange that sends ours (peer-load-exchange.ts),
 * started when the server is ready and stopped when it closes.
 */
import fp from 'fastify-plugin';
import type { FastifyInstance } from 'fastify';
import type { ResolvedOptions } from '../options.js';
import { peerLoadRoutes } from './peer-load-routes.js';
import { webppPushHeaders } from './push-headers-plugin.js';
import type { PushState } from './push-state.js';

export interface PushPluginOptions {
  options: ResolvedOptions;
  state: PushState;
}

async function pushPlugin(app: FastifyInstance, { options, state }: PushPluginOptions): Promise<void> {
  if (!options.pushServiceTime) return;
  await app.register(webppPushHeaders, { push: state.push, peerLoads: state.peerLoads, peerLoadMaxAgeMs: options.peerLoadMaxAgeMs });
  if (options.clusterSecret !== undefined) await app.register(peerLoadRoutes, { options, peerLoads: state.peerLoads, ownMessage: () => state.ownMessage() });
  const exchange = state.exchange;
  if (exchange === undefined) return;
  app.addHook('onReady', async () => exchange.start());
  app.addHook('onClose', async () => exchange.stop());
}

export const webppPush = fp(pushPlugin, { fastify: '5.x', name: 'webpp-push' });
