/**
 * Batch transmission on the origin (Web++ paper, Section 3.4). When a GET for an HTML page
 * asks for a batch (`Accept: application/vnd.webpp.batch`), the page is answered as one
 * streamed batch: the page first, then every embedded resource this server holds and that
 * the request's cache digest does not show as cached, each part with its logical URL,
 * headers and validator. Any other request is untouched, and so is any page whose response
 * is not a plain 200 HTML body.
 *
 * It is an onSend hook: register it after whatever produces and pre-processes pages (the
 * webppOrigin plugin does this itself), so that the page in the batch is byte for byte the
 * page a plain GET returns, bindings header included.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { BATCH_MEDIA_TYPE, CACHE_DIGEST_HEADER, decodeCacheDigest, type BatchManifest, type CacheDigest } from '@webpp/core';
import { isHtmlContentType } from '../html-pages.js';
import { bufferPayload } from '../http/payload.js';
import { resolveBatchOptions, type BatchOptions, type ResolvedBatchOptions } from './batch-options.js';
import { createBatchStream, type PlannedPart } from './batch-stream.js';
import { ACCEPT_CH, CLIENT_HINT_HEADERS, readClientHints } from './client-hints.js';
import { planEmbedded } from './embedded-plan.js';
import { createPageAnalyses } from './page-analyses.js';
import { createSheetReader } from './sheet-reader.js';
import { acceptsBatch, chooseEncoding, isCompressible, type BatchEncoding } from './negotiation.js';
import { headOf, injectResourceReader, partHeaders, usableValidator, type ResourceBody, type ResourceHead, type ResourceReader } from './resource-reader.js';
import { pathStep } from '../compose/path-hooks.js';


/** Where batches get their facts; batchSourceFromOrigin builds it from the webpp plugin. */
export interface BatchSource {
  /** Logical URL of the page a request asks for; undefined: never batch it. */
  pageUrl(request: FastifyRequest): string | undefined;
  /** Path (and query) at which this server holds a logical URL; undefined when it holds none. */
  localPathOf(logicalUrl: string): string | undefined;
  /**
   * Logical URLs a page embeds, when the default does not suit. Default: what the page
   * surely loads, the responsive-image candidates its client hints pick, and what its style
   * sheets load (embedded-plan.ts).
   */
  embeddedUrls?(html: string, pageUrl: string): string[];
  /** Reads resources. Default: through the server itself (injectResourceReader). */
  reader?: ResourceReader;
  /** Answer CORS preflights that carry the cache-digest header. Default true. */
  cors?: boolean;
  /** False while batching must pause (e.g. the kill switch is on). Default: always active. */
  active?(): boolean;
}

/** Counters, for tests, logs and the stats endpoint. */
export interface BatchStats {
  /** Batches started. */
  batches: number;
  /** Batches whose end frame was written. */
  completed: number;
  /** Embedded resources sent in batches. */
  partsSent: number;
  /** Embedded resources left out because the client's cache digest held them. */
  partsCached: number;
  /** Announced resources that could not be sent after all. */
  partsMissing: number;
  /** Body bytes sent in batches (pages included), before compression. */
  bodyBytes: number;
}

export interface BatchController {
  readonly options: ResolvedBatchOptions;
  readonly stats: BatchStats;
}

declare module 'fastify' {
  interface FastifyInstance {
    /** Batch transmission: options and counters (set by registerBatching). */
    webppBatch?: BatchController;
  }
}

/** Request headers forwarded to same-origin embedded resources, as the browser would send them. */
const FORWARDED_REQUEST_HEADERS = ['cookie', 'authorization', 'accept-language'] as const;
/** Headers of the page that describe the page itself, not the batch carrying it. */
const PAGE_ONLY_HEADERS = ['content-length', 'content-type', 'etag', 'last-modified', 'expires', 'accept-ranges', 'content-range', 'age'];

function headerString(reply: FastifyReply, name: string): string | undefined {
  const value = reply.getHeader(name);
  if (value === undefined) return undefined;
  return Array.isArray(value) ? value.join(', ') : String(value);
}

function appendVary(reply: FastifyReply, ...fields: string[]): void {
  const current = headerString(reply, 'vary');
  const present = new Set((current ?? '').split(',').map((field) => field.trim().toLowerCase()).filter(Boolean));
  if (present.has('*')) return;
  const added = fields.filter((field) => !present.has(field.toLowerCase()));
  if (added.length === 0) return;
  reply.header('vary', [current, ...added].filter(Boolean).join(', '));
}

function originOf(url: string): string | undefined {
  try {
    return new URL(url).origin;
  } catch {
    return undefined;
  }
}

/** Runs `task` over `items` with at most `limit` in flight; results in input order. */
async function mapLimited<T, R>(items: readonly T[], limit: number, task: (item: T) => Promise<R>): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) {
      const index = next++;
      results[index] = await task(items[index] as T);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return results;
}

export function registerBatching(app: FastifyInstance, source: BatchSource, rawOptions?: BatchOptions | boolean): BatchController {
  const options = resolveBatchOptions(rawOptions);
  const stats: BatchStats = { batches: 0, completed: 0, partsSent: 0, partsCached: 0, partsMissing: 0, bodyBytes: 0 };
  const controller: BatchController = { options, stats };
  // `app.webppBatch`: the options and counters, for stats endpoints and tests.
  if (!app.hasDecorator('webppBatch')) app.decorate('webppBatch', controller);
  if (!options.enabled) return controller;
  const log = app.log.child({ feature: 'webpp-batch' });
  const reader = source.reader ?? injectResourceReader(app);
  const analyses = createPageAnalyses();
  const sheetReader = createSheetReader(reader);

  const step = pathStep(app, 'webpp-batch');
  if (source.cors !== false) {
    step.addHook('onRequest', async (request, reply) => {
      if (request.method !== 'OPTIONS' || reply.sent) return;
      const method = request.headers['access-control-request-method']?.trim().toUpperCase();
      const asked = (request.headers['access-control-request-headers'] ?? '')
        .split(',')
        .map((name) => name.trim().toLowerCase())
        .filter(Boolean);
      if (method !== 'GET' || !asked.includes(CACHE_DIGEST_HEADER)) return;
      // Only headers a batch navigation carries: the digest and the usual conditional ones.
      const allowed = new Set([CACHE_DIGEST_HEADER, 'if-none-match', 'if-modified-since', 'cache-control', 'pragma']);
      if (!asked.every((name) => allowed.has(name))) return;
      return reply
        .code(204)
        .header('access-control-allow-origin', '*')
        .header('access-control-allow-methods', 'GET, HEAD')
        .header('access-control-allow-headers', [...allowed].join(', '))
        .header('access-control-max-age', '86400')
        .header('vary', 'Access-Control-Request-Method, Access-Control-Request-Headers')
        .send();
    });
  }


  step.addHook('onSend', async (request, reply, payload) => {
    if (request.method !== 'GET' || reply.statusCode !== 200) return payload;
    const contentType = headerString(reply, 'content-type');
    if (!isHtmlContentType(contentType)) return payload;
    appendVary(reply, 'Accept');
    // Client hints let a batch carry the one candidate of each responsive image the client will fetch.
    if (reply.getHeader('accept-ch') === undefined) reply.header('accept-ch', ACCEPT_CH);
    if (!acceptsBatch(request.headers.accept) || source.active?.() === false) return payload;
    const contentEncoding = headerString(reply, 'content-encoding');
    if (contentEncoding !== undefined && contentEncoding.trim().toLowerCase() !== 'identity') return payload;
    const pageUrl = source.pageUrl(request);
    if (pageUrl === undefined) return payload;
    const buffered = await bufferPayload(payload, options.maxPageBytes);
    if (buffered === undefined) return payload;
    if (!buffered.complete) return buffered.stream;
    const html = buffered.body;

    const pageEtag = headerString(reply, 'etag');
    const pageOrigin = originOf(pageUrl);
    const forwardFor = (url: string): Record<string, string> => {
      const forward: Record<string, string> = {};
      if (originOf(url) !== pageOrigin) return forward;
      for (const name of FORWARDED_REQUEST_HEADERS) {
        const value = request.headers[name];
        if (typeof value === 'string') forward[name] = value;
      }
      return forward;
    };

    // Which embedded resources this server holds, and in which version (paper: "the embedded
    // resources are typically located on the same server").
    const plan =
      source.embeddedUrls !== undefined
        ? { urls: source.embeddedUrls(html.toString('utf8'), pageUrl), sheetBodies: new Map<string, ResourceBody>() }
        : await planEmbedded(analyses.get(html, pageUrl, pageEtag), pageUrl, readClientHints(request.headers), (url) => {
            const path = source.localPathOf(url);
            return path === undefined ? Promise.resolve(undefined) : sheetReader.read(url, path, forwardFor(url));
          });
    const candidates = plan.urls
      .flatMap((url) => {
        const path = source.localPathOf(url);
        return path === undefined ? [] : [{ url, path }];
      })
      .slice(0, options.maxParts);
    const heads = await mapLimited(candidates, 16, async (candidate): Promise<ResourceHead | undefined> => {
      const sheet = plan.sheetBodies.get(candidate.url);
      if (sheet !== undefined) return headOf(sheet);
      try {
        return await reader.head(candidate.path, forwardFor(candidate.url));
      } catch (error) {
        log.debug({ err: error, url: candidate.url }, 'batch: HEAD of an embedded resource failed');
        return undefined;
      }
    });
    const digest = readDigest(request);
    const manifest: BatchManifest = { page: pageUrl, parts: [], cached: [] };
    const parts: PlannedPart[] = [];
    let compressibleBytes = isCompressible(contentType) ? html.byteLength : 0;
    let totalBytes = html.byteLength;
    candidates.forEach((candidate, index) => {
      const head = heads[index];
      if (head === undefined || head.status !== 200 || head.encoded) return;
      if (head.contentLength !== undefined && head.contentLength > options.maxPartBytes) return;
      if (head.validator !== undefined && digest?.has(candidate.url, head.validator) === true) {
        manifest.cached.push([candidate.url, head.validator]);
        return;
      }
      manifest.parts.push(candidate.url);
      totalBytes += head.contentLength ?? 0;
      if (isCompressible(head.contentType)) compressibleBytes += head.contentLength ?? 0;
      const sheet = plan.sheetBodies.get(candidate.url);
      parts.push({ url: candidate.url, read: () => (sheet === undefined ? reader.get(candidate.path, forwardFor(candidate.url)) : Promise.resolve(sheet)) });
    });

    const encoding = chooseBatchEncoding(request, compressibleBytes, totalBytes);
    const pageMeta = {
      url: pageUrl,
      status: 200,
      headers: partHeaders(reply.getHeaders()),
      body: html,
    };
    const pageValidator = usableValidator(pageEtag);
    const page = pageValidator === undefined ? pageMeta : { ...pageMeta, validator: pageValidator };

    for (const name of PAGE_ONLY_HEADERS) reply.removeHeader(name);
    reply.header('content-type', BATCH_MEDIA_TYPE);
    // Each batch depends on the request's digest: no cache may reuse it.
    reply.header('cache-control', 'no-store');
    appendVary(reply, CACHE_DIGEST_HEADER, 'Accept-Encoding', ...CLIENT_HINT_HEADERS);
    if (encoding !== 'identity') reply.header('content-encoding', encoding);

    stats.batches += 1;
    stats.partsCached += manifest.cached.length;
    log.debug({ page: pageUrl, parts: manifest.parts.length, cached: manifest.cached.length, encoding }, 'batch: streaming');
    return createBatchStream(
      { manifest, page, parts },
      { encoding, concurrency: options.concurrency, maxPartBytes: options.maxPartBytes, maxBatchBytes: options.maxBatchBytes },
      {
        onFinish(result) {
          stats.completed += 1;
          stats.partsSent += result.sentParts - 1;
          stats.partsMissing += result.missing.length;
          stats.bodyBytes += result.bodyBytes;
        },
        onError(error) {
          log.warn({ err: error, page: pageUrl }, 'batch: stream failed; the client falls back to single requests');
        },
      },
    );
  });

  function readDigest(request: FastifyRequest): CacheDigest | undefined {
    const raw = request.headers[CACHE_DIGEST_HEADER];
    if (raw === undefined) return undefined;
    const result = decodeCacheDigest(Array.isArray(raw) ? raw[0] : raw, { maxBytes: options.maxDigestBytes });
    if (result.ok) return result.digest;
    // A bad digest only costs bytes: everything is sent.
    log.debug({ code: result.error.code }, `batch: cache digest ignored: ${result.error.message}`);
    return undefined;
  }

  /** Paper Section 3.4: compress "when that helps" — enough text to gain from it. */
  function chooseBatchEncoding(request: FastifyRequest, compressibleBytes: number, totalBytes: number): BatchEncoding {
    if (options.compression === 'never') return 'identity';
    if (
      options.compression === 'auto' &&
      (compressibleBytes < options.minCompressibleBytes || compressibleBytes < options.minCompressibleShare * totalBytes)
    ) {
      return 'identity';
    }
    return chooseEncoding(request.headers['accept-encoding']);
  }

  return controller;
}
