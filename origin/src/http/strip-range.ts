/**
 * Byte ranges of a page that is rewritten (script injection) would not line up with the
 * bytes sent: the Range header of a request for a page is dropped, and the whole page is
 * answered (RFC 9110 lets a server ignore Range). Other resources keep their ranges.
 */
import fp from 'fastify-plugin';
import type { FastifyInstance } from 'fastify';
import { isPagePath } from '../html-pages.js';
import { isWellKnown, requestPath } from './request-paths.js';
import { pathStep } from '../compose/path-hooks.js';

export interface StripRangePluginOptions {
  /** False when no page is rewritten (injectScript off): ranges are left alone. */
  injecting: boolean;
}

async function stripRangePlugin(app: FastifyInstance, { injecting }: StripRangePluginOptions): Promise<void> {
  if (!injecting) return;
  const step = pathStep(app, 'webpp-strip-range');
  step.addHook('onRequest', async (request) => {
    if (request.headers.range === undefined || (request.method !== 'GET' && request.method !== 'HEAD')) return;
    if (isWellKnown(request.url)) return;
    if (isPagePath(requestPath(request.url) ?? request.url)) delete request.headers.range;
  });
}

export const webppStripRange = fp(stripRangePlugin, { fastify: '5.x', name: 'webpp-strip-range' });
