/**
 * The hooks that make any Fastify route a Web++ resource:
 * - onRequest: CORS preflight; serving replicas held in the replica store (they take
 *   precedence over the site's own routes, since PUT may have updated them);
 * - onSend: CORS for replicated resources, the kill switch, and the bindings header —
 *   HTML and CSS bodies (static files, dynamic routes, proxied upstream responses alike)
 *   are parsed for references (paper Section 5.1), every other replicated resource gets
 *   its own binding; results are cached (PreprocessCache);
 * - onResponse: load statistics.
 */
import { createHash } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { BINDINGS_HEADER, CONTROL_HEADER, CONTROL_OFF, encodeBindings } from '@webpp/core';
import { ContentDigests } from '../bindings/content-digests.js';
import { canonicalUrl } from '../directory/url-spec.js';
import type { DirectoryMatch } from '../directory/replication-directory.js';
import { PreprocessCache, type PreprocessResult } from '../bindings/preprocess-cache.js';
import { bindingsOnly, preprocessBody, preprocessKind, type PreprocessSettings } from '../bindings/preprocess.js';
import { bufferPayload, discardPayload, isStream } from './payload.js';
import { answerPreflight, setCorsHeaders } from './cors.js';
import { serveReplica } from './serve-replica.js';
import { WELL_KNOWN_PREFIX, type WebppOrigin } from '../state.js';

/** The embedded resources pre-processing found in the page each request is answered with. */
const preprocessedPages = new WeakMap<FastifyRequest, { pageUrl: string; embeddedUrls: string[] }>();

/**
 * Logical URLs of the resources embedded in the page `request` is being answered with, as
 * pre-processing (or its cache) found them for `pageUrl`; undefined when the response was
 * not parsed as HTML for that URL. Batch transmission uses it so a page is parsed once.
 */
export function preprocessedEmbeddedUrls(request: FastifyRequest, pageUrl: string): string[] | undefined {
  const page = preprocessedPages.get(request);
  return page?.pageUrl === pageUrl ? page.embeddedUrls : undefined;
}

/** Most URLs looked up for digests per response (bounds the hashing one page can cause). */
const MAX_DIGESTS_PER_HEADER = 256;

/** Suffix added inside the entity tag of pages whose body got the script tag. */
const INJECTED_ETAG_SUFFIX = '-webpp';

function headerString(reply: FastifyReply, name: string): string | undefined {
  const value = reply.getHeader(name);
  if (value === undefined) return undefined;
  return Array.isArray(value) ? value.join(', ') : String(value);
}

/** The canonical path of a request URL (no query), or undefined if it does not parse. */
function requestPath(url: string): string | undefined {
  try {
    return new URL(url, 'http://webpp.invalid').pathname;
  } catch {
    return undefined;
  }
}

function looksLikeHtmlPath(path: string): boolean {
  return path.endsWith('/') || /\.x?html?$/i.test(path) || !/\.[A-Za-z0-9]{1,8}$/.test(path);
}

function withInjectedSuffix(etag: string): string {
  return etag.endsWith('"') ? `${etag.slice(0, -1)}${INJECTED_ETAG_SUFFIX}"` : etag;
}

export function registerResponseHooks(app: FastifyInstance, state: WebppOrigin): void {
  const { options, directory, cache, store, stats } = state;
  const settings: PreprocessSettings = {
    directory,
    maxBindingsHeaderBytes: options.maxBindingsHeaderBytes,
    injectScriptPath: options.injectScript ? options.scriptPath : undefined,
  };
  const variant = `${settings.injectScriptPath ?? '-'}|${options.maxBindingsHeaderBytes}`;
  const digests = options.contentDigests
    ? new ContentDigests({ publicUrl: options.publicUrl, contentRoot: options.contentRoot, directory, store })
    : undefined;
  /** Requests whose conditional headers named an injected page's validator. */
  const sentInjectedValidator = new WeakSet<FastifyRequest>();
  const clientScriptPaths = new Set(
    [options.scriptPath, options.workerPath].flatMap((path) => [path, `${path}.map`]),
  );
  const ownEndpoint = (url: string): boolean => {
    if (url.startsWith(WELL_KNOWN_PREFIX)) return true;
    if (!options.serveClientScripts) return false;
    const queryStart = url.indexOf('?');
    return clientScriptPaths.has(queryStart < 0 ? url : url.slice(0, queryStart));
  };

  app.addHook('onRequest', async (request, reply) => {
    const url = request.url;
    if (url.startsWith(WELL_KNOWN_PREFIX)) return;
    if (request.method === 'OPTIONS') {
      const method = request.headers['access-control-request-method'];
      if (options.cors !== 'off' && method !== undefined && answerPreflight(method, request.headers['access-control-request-headers'], reply)) {
        return reply.send();
      }
      return;
    }
    if (request.method !== 'GET' && request.method !== 'HEAD') return;
    if (settings.injectScriptPath !== undefined) {
      // Validators we handed out for injected pages carry a suffix; the underlying route
      // (e.g. @fastify/static) knows the file's own validator.
      for (const name of ['if-none-match', 'if-range'] as const) {
        const raw = request.headers[name];
        const value = Array.isArray(raw) ? raw.join(', ') : raw;
        if (value?.includes(`${INJECTED_ETAG_SUFFIX}"`)) {
          request.headers[name] = value.split(`${INJECTED_ETAG_SUFFIX}"`).join('"');
          sentInjectedValidator.add(request);
        }
      }
      // Byte ranges of a page that is rewritten would not line up with the bytes sent.
      if (request.headers.range !== undefined && looksLikeHtmlPath(requestPath(url) ?? url)) delete request.headers.range;
    }
    if (store.size === 0) return;
    const path = requestPath(url);
    if (path === undefined) return;
    const replica = store.get(path);
    if (replica === undefined) return;
    try {
      await serveReplica(request, reply, store, replica);
    } catch (error) {
      // The client went away after the headers (often right after the last byte): the
      // answer is over. Anything before the headers is a real error for Fastify to answer.
      if (!reply.raw.headersSent) throw error;
    }
    // A destroyed response is not "sent" for Fastify, which would go on to route the request
    // and answer it a second time (a logged 500): nothing else may answer it.
    if (!reply.sent) reply.hijack();
    return reply;
  });

  app.addHook('onSend', async (request, reply, payload) => {
    if (state.killSwitch) reply.header(CONTROL_HEADER, CONTROL_OFF);
    if (request.method !== 'GET' && request.method !== 'HEAD') return payload;
    if (ownEndpoint(request.url)) return payload;
    const status = reply.statusCode;
    if (status !== 200 && status !== 206 && status !== 304) return payload;
    const resolved = resolve(request.url);
    if (resolved === undefined) return payload;
    const { pageUrl, replicated } = resolved;
    if (options.cors === 'all' || (options.cors === 'replicated' && replicated)) setCorsHeaders(reply);
    if (state.killSwitch) return payload;
    const etag = headerString(reply, 'etag');
    let own = resolved.own;
    if (own !== undefined && !own.binding.prefix && etag?.startsWith('"sha256-') === true) {
      // Content digests are identical on every server holding the version: a usable validator.
      own = { ...own, binding: { ...own.binding, validator: etag } };
    }
    if (status === 304) {
      // A 304 may lack Content-Type; the cached result of the 200 with this validator tells all.
      const validator304 = etag ?? headerString(reply, 'last-modified');
      const hit = validator304 === undefined ? undefined : cache.get(PreprocessCache.key(pageUrl, validator304, directory.version, variant));
      if (hit?.bindingsHeader !== undefined) reply.header(BINDINGS_HEADER, await withDigests(hit, pageUrl));
      if (hit === undefined) await setOwnBinding(reply, own, pageUrl, etag);
      const injected = hit !== undefined ? hit.body !== undefined : sentInjectedValidator.has(request);
      if (injected && etag !== undefined) reply.header('etag', withInjectedSuffix(etag));
      return payload;
    }
    const contentEncoding = headerString(reply, 'content-encoding');
    const kind = preprocessKind(headerString(reply, 'content-type'));
    if (kind === undefined || status === 206 || (contentEncoding !== undefined && contentEncoding !== 'identity')) {
      await setOwnBinding(reply, own, pageUrl, etag);
      return payload;
    }

    const validator = etag ?? headerString(reply, 'last-modified');
    let key = validator === undefined ? undefined : PreprocessCache.key(pageUrl, validator, directory.version, variant);
    if (key !== undefined) {
      const hit = cache.get(key);
      if (hit !== undefined) {
        rememberPage(request, pageUrl, hit);
        // Release a replaced stream at once: an upstream body left waiting may fail meanwhile.
        if (hit.body !== undefined) discardPayload(payload);
        await applyHeaders(reply, hit, etag, pageUrl);
        return hit.body ?? payload;
      }
    }
    const declaredLength = Number(headerString(reply, 'content-length') ?? Number.NaN);
    if (declaredLength > options.maxPreprocessBytes) {
      await setOwnBinding(reply, own, pageUrl, etag);
      return payload;
    }
    const buffered = await bufferPayload(payload, options.maxPreprocessBytes);
    if (buffered === undefined || !buffered.complete) {
      await setOwnBinding(reply, own, pageUrl, etag);
      return buffered === undefined ? payload : buffered.stream;
    }
    const body = buffered.body;
    if (body.byteLength === 0 && request.method === 'HEAD') {
      await setOwnBinding(reply, own, pageUrl, etag); // nothing to parse: HEAD of a route that sends no body
      return isStream(payload) ? null : payload;
    }
    let result: PreprocessResult | undefined;
    if (key === undefined) {
      key = PreprocessCache.key(pageUrl, `sha1:${createHash('sha1').update(body).digest('base64')}`, directory.version, variant);
      result = cache.get(key);
    }
    if (result === undefined) {
      result = preprocessBody(kind, body, headerString(reply, 'content-type'), pageUrl, own, settings);
      cache.set(key, result);
    }
    rememberPage(request, pageUrl, result);
    await applyHeaders(reply, result, etag, pageUrl);
    return result.body ?? body;
  });

  /**
   * What the directory says about a request URL: its logical URL (the page URL references
   * resolve against), whether it is a replica, and its own binding. Memoised per raw URL
   * until the directory changes, so the hot path parses no URL.
   */
  interface Resolution {
    pageUrl: string;
    replicated: boolean;
    own: DirectoryMatch | undefined;
  }
  const resolutions = new Map<string, Resolution | undefined>();
  const MAX_RESOLUTIONS = 10_000;
  directory.onChange(() => resolutions.clear());
  function resolve(url: string): Resolution | undefined {
    if (resolutions.has(url)) return resolutions.get(url);
    const physicalUrl = canonicalUrl(options.publicUrl + url);
    let resolution: Resolution | undefined;
    if (physicalUrl !== undefined) {
      const mappedLogical = directory.logicalOf(physicalUrl);
      const pageUrl = mappedLogical ?? physicalUrl;
      resolution = { pageUrl, replicated: mappedLogical !== undefined, own: directory.lookup(pageUrl) };
    }
    if (resolutions.size >= MAX_RESOLUTIONS) resolutions.clear();
    resolutions.set(url, resolution);
    return resolution;
  }

  /** Bindings header of a response that is not parsed: the resource's own binding. */
  async function setOwnBinding(reply: FastifyReply, own: DirectoryMatch | undefined, pageUrl: string, etag: string | undefined): Promise<void> {
    if (own === undefined) return;
    const key = PreprocessCache.key(pageUrl, `own:${etag ?? ''}`, directory.version, variant);
    let result = cache.get(key);
    if (result === undefined) {
      result = bindingsOnly([own.binding], settings);
      cache.set(key, result);
    }
    if (result.bindingsHeader !== undefined) reply.header(BINDINGS_HEADER, await withDigests(result, pageUrl));
  }

  /**
   * The header of a result with the digests of the response's own URL and of the URLs its
   * bindings cover (content-digests.ts), when digests are on and any is known. Re-encoded
   * only when the digests changed.
   */
  async function withDigests(result: PreprocessResult, pageUrl: string): Promise<string | undefined> {
    if (digests === undefined || result.bindings === undefined || result.bindingsHeader === undefined) return result.bindingsHeader;
    const urls = [pageUrl, ...(result.boundUrls ?? [])].slice(0, MAX_DIGESTS_PER_HEADER);
    const found = await digests.digestsOf(urls);
    if (found.length === 0) return result.bindingsHeader;
    const fingerprint = found.map((digest) => `${digest.logical} ${digest.integrity}`).join('\n');
    if (result.digested?.fingerprint === fingerprint) return result.digested.header;
    const encoded = encodeBindings(
      { directoryVersion: directory.version, bindings: result.bindings, digests: found },
      { maxBytes: options.maxBindingsHeaderBytes },
    );
    result.digested = { fingerprint, header: encoded.value };
    return encoded.value;
  }

  function rememberPage(request: FastifyRequest, pageUrl: string, result: PreprocessResult): void {
    if (result.embeddedUrls !== undefined) preprocessedPages.set(request, { pageUrl, embeddedUrls: result.embeddedUrls });
  }

  async function applyHeaders(reply: FastifyReply, result: PreprocessResult, etag: string | undefined, pageUrl: string): Promise<void> {
    if (result.bindingsHeader !== undefined) reply.header(BINDINGS_HEADER, await withDigests(result, pageUrl));
    if (result.body !== undefined) {
      reply.header('content-length', String(result.body.byteLength));
      if (etag !== undefined) reply.header('etag', withInjectedSuffix(etag));
    }
  }

  app.addHook('onResponse', async (request: FastifyRequest, reply: FastifyReply) => {
    if (request.url.startsWith(WELL_KNOWN_PREFIX)) return;
    const queryStart = request.url.indexOf('?');
    const path = queryStart < 0 ? request.url : request.url.slice(0, queryStart);
    const bytes = request.method === 'HEAD' ? 0 : Number(reply.getHeader('content-length') ?? 0) || 0;
    stats.record(path, bytes, reply.elapsedTime);
  });
}
