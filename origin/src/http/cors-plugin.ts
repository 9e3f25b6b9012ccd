/**
 * CORS for the worker (cors.ts says why): answers preflights for GET / HEAD, and adds the
 * CORS response headers to replicated resources (`cors: 'replicated'`) or to every
 * resource (`cors: 'all'`). The origin's own endpoints set their own.
 */
import fp from 'fastify-plugin';
import type { FastifyInstance } from 'fastify';
import type { CorsMode } from '../options.js';
import { answerPreflight, setCorsHeaders } from './cors.js';
import { isWellKnown } from './request-paths.js';
import type { UrlResolutions } from './url-resolutions.js';
import { pathStep } from '../compose/path-hooks.js';

export interface CorsPluginOptions {
  mode: CorsMode;
  resolutions: UrlResolutions;
  isOwnEndpoint: (url: string) => boolean;
}

async function corsPlugin(app: FastifyInstance, { mode, resolutions, isOwnEndpoint }: CorsPluginOptions): Promise<void> {
  if (mode === 'off') return;

  const step = pathStep(app, 'webpp-cors');
  step.addHook('onRequest', async (request, reply) => {
    if (request.method !== 'OPTIONS' || isWellKnown(request.url)) return;
    const method = request.headers['access-control-request-method'];
    if (method !== undefined && answerPreflight(method, request.headers['access-control-request-headers'], reply)) {
      return reply.send();
    }
  });

  step.addHook('onSend', async (request, reply, payload) => {
    if (request.method !== 'GET' && request.method !== 'HEAD') return payload;
    // Every status: the worker reads a replica's 404 as a stale binding, its 3xx and 204 as
    // answers; without these headers any of them is a network error in CORS mode, and a live
    // replica is marked failed. The bodies are as public as the resource (no credentials).
    if (isOwnEndpoint(request.url)) return payload;
    const resolved = resolutions.resolve(request.url);
    if (resolved !== undefined && (mode === 'all' || resolved.replicated)) setCorsHeaders(reply);
    return payload;
  });
}

export const webppCors = fp(corsPlugin, { fastify: '5.x', name: 'webpp-cors' });
