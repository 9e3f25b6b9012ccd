/**
 * The entity tags of pages whose body got the script tag (inject-script.ts). Such a page is
 * not the bytes of the file, so its validator must differ from the file's: a suffix is
 * added inside the quotes ("abc" → "abc-webpp"). On the way in, this plugin strips the
 * suffix from If-None-Match and If-Range, so that the route underneath (e.g.
 * @fastify/static) compares the file's own validator, and records on the request that it
 * did (`request.webppSentInjectedValidator`). On the way out the bindings-header plugin,
 * which rewrites the body, adds the suffix (withInjectedSuffix).
 */
import fp from 'fastify-plugin';
import type { FastifyInstance } from 'fastify';
import { isWellKnown } from './request-paths.js';
import { pathStep } from '../compose/path-hooks.js';

/** Suffix added inside the entity tag of pages whose body got the script tag. */
const INJECTED_ETAG_SUFFIX = '-webpp';

declare module 'fastify' {
  interface FastifyRequest {
    /** True when the request's conditional headers named an injected page's validator. */
    webppSentInjectedValidator: boolean;
  }
}

export function withInjectedSuffix(etag: string): string {
  return etag.endsWith('"') ? `${etag.slice(0, -1)}${INJECTED_ETAG_SUFFIX}"` : etag;
}

export interface InjectedEtagPluginOptions {
  /** False when no page is rewritten (injectScript off): nothing to strip. */
  injecting: boolean;
}

async function injectedEtagPlugin(app: FastifyInstance, { injecting }: InjectedEtagPluginOptions): Promise<void> {
  app.decorateRequest('webppSentInjectedValidator', false);
  if (!injecting) return;
  const marker = `${INJECTED_ETAG_SUFFIX}"`;
  const step = pathStep(app, 'webpp-injected-etag');
  step.addHook('onRequest', async (request) => {
    if ((request.method !== 'GET' && request.method !== 'HEAD') || isWellKnown(request.url)) return;
    for (const name of ['if-none-match', 'if-range'] as const) {
      const raw = request.headers[name];
      const value = Array.isArray(raw) ? raw.join(', ') : raw;
      if (value?.includes(marker)) {
        request.headers[name] = value.split(marker).join('"');
        request.webppSentInjectedValidator = true;
      }
    }
  });
}

export const webppInjectedEtag = fp(injectedEtagPlugin, { fastify: '5.x', name: 'webpp-injected-etag' });
