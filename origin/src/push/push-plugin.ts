/**
 * Server push (issue 13), as one plugin: the Server-Timing and webpp-load headers on every
 * response (push-headers-plugin.ts), carrying the utilisation meter's value
 * (stats/utilisation.ts; the origin plugin runs the meter, replication reads it too), and the
 * announcer that pings the peers when our value changes (push-announcer.ts), started when
 * the server is ready and stopped when it closes.
 * The values travel in the peer load records (peer-loads.ts), not over a route of their own.
 */
import fp from 'fastify-plugin';
import type { FastifyInstance } from 'fastify';
import type { ResolvedOptions } from '../options.js';
import { webppPushHeaders } from './push-headers-plugin.js';
import type { PushState } from './push-state.js';

export interface PushPluginOptions {
  options: ResolvedOptions;
  state: PushState;
}

async function pushPlugin(app: FastifyInstance, { options, state }: PushPluginOptions): Promise<void> {
  if (!options.pushServiceTime) return;
  const meter = state.utilisation;
  await app.register(webppPushHeaders, { push: state.push, peerLoads: state.peerLoads, peerLoadMaxAgeMs: options.peerLoadMaxAgeMs, utilisation: () => meter.current() });
  const announcer = state.announcer;
  if (announcer === undefined) return;
  app.addHook('onReady', async () => announcer.start());
  app.addHook('onClose', async () => announcer.stop());
}

export const webppPush = fp(pushPlugin, { fastify: '5.x', name: 'webpp-push' });
