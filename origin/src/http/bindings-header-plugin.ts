/**
 * The bindings header on every GET / HEAD answer that is a resource of this site (static
 * files, dynamic routes, proxied upstream responses alike). HTML and CSS bodies are parsed
 * for references (paper Section 5.1) and, for pages, get the script tag when injection is
 * on; every other resource of the directory gets its own binding. Results are cached
 * (bindings-headers.ts). The page's logical URL and embedded resources travel on
 * `request.webppPage`, for hooks registered after this plugin.
 */
import fp from 'fastify-plugin';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { BINDINGS_HEADER } from '@webpp/core';
import type { PreprocessResult } from '../bindings/preprocess-cache.js';
import { preprocessBody, preprocessKind } from '../bindings/preprocess.js';
import type { BindingsHeaders } from './bindings-headers.js';
import { withInjectedSuffix } from './injected-etag.js';
import type { KillSwitch } from './kill-switch.js';
import { bufferPayload, discardPayload, isStream } from './payload.js';
import type { UrlResolutions } from './url-resolutions.js';
import { pathStep } from '../compose/path-hooks.js';

/** The page a request was answered with, as pre-processing (or its cache) saw it. */
interface PreprocessedPage {
  /** Logical URL of the page. */
  pageUrl: string;
  /** Logical URLs of its embedded resources (htmlReferences), in document order. */
  embeddedUrls: string[];
}

declare module 'fastify' {
  interface FastifyRequest {
    /** Set when the response is an HTML page that was pre-processed; null otherwise. */
    webppPage: PreprocessedPage | null;
  }
}

export interface BindingsHeaderPluginOptions {
  headers: BindingsHeaders;
  resolutions: UrlResolutions;
  killSwitch: KillSwitch;
  isOwnEndpoint: (url: string) => boolean;
  /** Bodies longer than this are not parsed (maxPreprocessBytes). */
  maxPreprocessBytes: number;
}

function headerString(reply: FastifyReply, name: string): string | undefined {
  const value = reply.getHeader(name);
  if (value === undefined) return undefined;
  return Array.isArray(value) ? value.join(', ') : String(value);
}

async function bindingsHeaderPlugin(app: FastifyInstance, options: BindingsHeaderPluginOptions): Promise<void> {
  const { headers, resolutions, killSwitch, isOwnEndpoint, maxPreprocessBytes } = options;
  const { cache, settings } = headers;
  app.decorateRequest('webppPage', null);

  const setHeader = async (reply: FastifyReply, value: Promise<string | undefined>): Promise<void> => {
    const header = await value;
    if (header !== undefined) reply.header(BINDINGS_HEADER, header);
  };
  const applyResult = async (request: FastifyRequest, reply: FastifyReply, result: PreprocessResult, pageUrl: string, etag: string | undefined) => {
    if (result.embeddedUrls !== undefined) request.webppPage = { pageUrl, embeddedUrls: result.embeddedUrls };
    await setHeader(reply, headers.headerOf(result, pageUrl));
    if (result.body !== undefined) {
      reply.header('content-length', String(result.body.byteLength));
      if (etag !== undefined) reply.header('etag', withInjectedSuffix(etag));
    }
  };

  const step = pathStep(app, 'webpp-bindings-header');
  step.addHook('onSend', async (request, reply, payload) => {
    if (killSwitch.on || (request.method !== 'GET' && request.method !== 'HEAD')) return payload;
    const status = reply.statusCode;
    if ((status !== 200 && status !== 206 && status !== 304) || isOwnEndpoint(request.url)) return payload;
    const resolved = resolutions.resolve(request.url);
    if (resolved === undefined) return payload;
    const { pageUrl } = resolved;
    const etag = headerString(reply, 'etag');
    let own = resolved.own;
    if (own !== undefined && !own.binding.prefix && etag?.startsWith('"sha256-') === true) {
      // Content digests are identical on every server holding the version: a usable validator.
      own = { ...own, binding: { ...own.binding, validator: etag } };
    }
    const validator = etag ?? headerString(reply, 'last-modified');

    if (status === 304) {
      // A 304 may lack Content-Type; the cached result of the 200 with this validator tells all.
      const hit = validator === undefined ? undefined : cache.get(headers.validatorKey(pageUrl, validator));
      if (hit !== undefined) await setHeader(reply, headers.headerOf(hit, pageUrl));
      else await setHeader(reply, headers.ownHeader(own, pageUrl, etag));
      const injected = hit !== undefined ? hit.body !== undefined : request.webppSentInjectedValidator;
      if (injected && etag !== undefined) reply.header('etag', withInjectedSuffix(etag));
      return payload;
    }
    const contentType = headerString(reply, 'content-type');
    const contentEncoding = headerString(reply, 'content-encoding');
    const kind = preprocessKind(contentType);
    if (kind === undefined || status === 206 || (contentEncoding !== undefined && contentEncoding !== 'identity')) {
      await setHeader(reply, headers.ownHeader(own, pageUrl, etag));
      return payload;
    }

    let key = validator === undefined ? undefined : headers.validatorKey(pageUrl, validator);
    const hit = key === undefined ? undefined : cache.get(key);
    if (hit !== undefined) {
      // Release a replaced stream at once: an upstream body left waiting may fail meanwhile.
      if (hit.body !== undefined) discardPayload(payload);
      await applyResult(request, reply, hit, pageUrl, etag);
      return hit.body ?? payload;
    }
    if (Number(headerString(reply, 'content-length') ?? Number.NaN) > maxPreprocessBytes) {
      await setHeader(reply, headers.ownHeader(own, pageUrl, etag));
      return payload;
    }
    const buffered = await bufferPayload(payload, maxPreprocessBytes);
    if (buffered === undefined || !buffered.complete) {
      await setHeader(reply, headers.ownHeader(own, pageUrl, etag));
      return buffered === undefined ? payload : buffered.stream;
    }
    const body = buffered.body;
    if (body.byteLength === 0 && request.method === 'HEAD') {
      await setHeader(reply, headers.ownHeader(own, pageUrl, etag)); // nothing to parse: HEAD of a route that sends no body
      return isStream(payload) ? null : payload;
    }
    let result: PreprocessResult | undefined;
    if (key === undefined) {
      key = headers.bodyKey(pageUrl, body);
      result = cache.get(key);
    }
    if (result === undefined) {
      result = preprocessBody(kind, body, contentType, pageUrl, own, settings);
      cache.set(key, result);
    }
    await applyResult(request, reply, result, pageUrl, etag);
    return result.body ?? body;
  });
}

export const webppBindingsHeader = fp(bindingsHeaderPlugin, {
  fastify: '5.x',
  name: 'webpp-bindings-header',
  // It adds the suffix to the validators of the pages it rewrites.
  dependencies: ['webpp-injected-etag'],
});
