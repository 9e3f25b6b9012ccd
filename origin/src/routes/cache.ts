/**
 * The memory cache's management endpoints (IBM accelerator's API over HTTP; the in-process
 * API is cache/cache-api.ts), admin bearer token like the replica management API:
 *
 *   GET    /.well-known/webpp/cache                         summary: policy, bytes, counters
 *   GET    /.well-known/webpp/cache/<path>[?query]          query one entry (404 when not held)
 *   PUT    /.well-known/webpp/cache/<path>[?query]          put: body = content, Content-Type,
 *                                                           optional `webpp-cache-ttl-ms` header
 *   DELETE /.well-known/webpp/cache/<path>[?query]          invalidate the path (with any query)
 *   POST   /.well-known/webpp/cache-invalidations           { paths?: [...], prefixes?: [...] }
 *
 * Invalidations resolve once the cluster hook has run (every server's copy removed).
 */
import type { Readable } from 'node:stream';
import { errorCodes, type FastifyInstance, type FastifyRequest } from 'fastify';
import { WEBPP_ERR_BAD_BODY, WEBPP_ERR_BAD_HEADER, WEBPP_ERR_NOT_CACHED } from '../errors.js';
import type { MemoryCacheApi } from '../cache/cache-api.js';
import { apiCacheKey, apiCachePrefix } from '../cache/cache-key.js';
import type { ResolvedOptions } from '../options.js';
import { WELL_KNOWN_PREFIX } from '@webpp/core';
import { requireAdmin } from './management.js';

export const CACHE_PREFIX = `${WELL_KNOWN_PREFIX}cache`;
export const CACHE_INVALIDATIONS_PATH = `${WELL_KNOWN_PREFIX}cache-invalidations`;
/** Paths and prefixes in one invalidation call at most. */
const MAX_TARGETS = 1000;
/** Body of an invalidation call at most: 1000 paths and 1000 prefixes of a few hundred bytes each. */
const INVALIDATIONS_MAX_BYTES = 1024 * 1024;
const TTL_HEADER = 'webpp-cache-ttl-ms';

export interface CacheRoutesOptions {
  /** `memoryCacheMaxEntryBytes`: the body limit while no cache is attached. */
  options: Pick<ResolvedOptions, 'adminToken' | 'memoryCacheMaxEntryBytes'>;
  cache: MemoryCacheApi;
}

/**
 * The body of a PUT, at most `maxBytes`: past it, 413 as Fastify's own body limit answers
 * (its limit is fixed when the route is registered; this one is the attached cache's, which
 * the memory-cache feature may attach later, with its own `memoryCacheMaxEntryBytes`).
 */
function bodyAtMost(request: FastifyRequest, payload: Readable, maxBytes: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    if (Number(request.headers['content-length']) > maxBytes) {
      reject(new errorCodes.FST_ERR_CTP_BODY_TOO_LARGE());
      return;
    }
    const chunks: Buffer[] = [];
    let bytes = 0;
    // Listeners, not an async iterator: leaving one destroys the request and with it the socket the 413 goes out on.
    const stop = (): void => {
      payload.off('data', onData).off('end', onEnd).off('error', onEnd);
    };
    function onData(chunk: Buffer): void {
      bytes += chunk.byteLength;
      if (bytes <= maxBytes) chunks.push(chunk);
      else {
        stop();
        reject(new errorCodes.FST_ERR_CTP_BODY_TOO_LARGE());
      }
    }
    function onEnd(error?: Error): void {
      stop();
      if (error === undefined) resolve(Buffer.concat(chunks, bytes));
      else reject(Object.assign(error, { statusCode: 400 })); // the client's upload failed
    }
    payload.on('data', onData).on('end', onEnd).on('error', onEnd).resume();
  });
}

/** The path (and query) after the prefix. */
function pathOf(request: FastifyRequest): string {
  return request.url.slice(CACHE_PREFIX.length);
}

function ttlOf(request: FastifyRequest): number | undefined {
  const raw = request.headers[TTL_HEADER];
  if (raw === undefined) return undefined;
  const value = Array.isArray(raw) ? raw[0] : raw;
  if (value === undefined || !/^[1-9][0-9]{0,11}$/.test(value)) throw new WEBPP_ERR_BAD_HEADER(TTL_HEADER, 'a positive whole number of milliseconds');
  return Number(value);
}

const INVALIDATION_FIELDS = new Set(['paths', 'prefixes']);

export async function cacheRoutes(app: FastifyInstance, { options, cache }: CacheRoutesOptions): Promise<void> {
  app.addHook('onRequest', requireAdmin(options.adminToken, 'Cache management'));
  app.removeAllContentTypeParsers();
  // A PUT's body is an entry: at most the largest the cache in force holds, refused before it is read.
  const entryBytes = (): number => cache.local?.maxEntryBytes ?? options.memoryCacheMaxEntryBytes;
  app.addContentTypeParser('*', async (request: FastifyRequest, payload: Readable) =>
    bodyAtMost(request, payload, request.method === 'PUT' ? entryBytes() : INVALIDATIONS_MAX_BYTES),
  );

  app.get(CACHE_PREFIX, async () => cache.summary());

  app.get(`${CACHE_PREFIX}/*`, async (request) => {
    const info = cache.query(pathOf(request));
    if (info === undefined) throw new WEBPP_ERR_NOT_CACHED(pathOf(request).slice(0, 200));
    return info;
  });

  app.put(`${CACHE_PREFIX}/*`, async (request, reply) => {
    const body = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
    const contentType = request.headers['content-type'];
    const ttlMs = ttlOf(request);
    const info = cache.put(pathOf(request), body, { ...(ttlMs === undefined ? {} : { ttlMs }), ...(contentType === undefined ? {} : { contentType: contentType.slice(0, 256) }) });
    // 507: not held (cache off, too large, or colder than everything it would displace).
    if (info === undefined) return reply.code(507).send({ stored: false, enabled: cache.enabled });
    return { stored: true, ...info };
  });

  app.delete(`${CACHE_PREFIX}/*`, async (request) => ({ invalidated: await cache.invalidate(pathOf(request)) }));

  app.post(CACHE_INVALIDATIONS_PATH, async (request) => {
    let json: unknown;
    try {
      json = JSON.parse((request.body as Buffer).toString('utf8'));
    } catch (error) {
      throw new WEBPP_ERR_BAD_BODY(`not JSON (${(error as Error).message})`);
    }
    if (!isInvalidations(json)) throw new WEBPP_ERR_BAD_BODY(`expected {"paths": [...], "prefixes": [...]} with at most ${MAX_TARGETS} of each`);
    // Every target is checked before any is removed (a bad one refuses the whole call), and
    // they are invalidated together: a peer that does not answer costs one peerTimeoutMs for
    // the call, not one per target.
    const paths = json.paths ?? [];
    const prefixes = json.prefixes ?? [];
    for (const path of paths) apiCacheKey(path); // throws WEBPP_ERR_BAD_PATH
    for (const prefix of prefixes) apiCachePrefix(prefix);
    const counts = await Promise.all([...paths.map((path) => cache.invalidate(path)), ...prefixes.map((prefix) => cache.invalidate({ prefix }))]);
    return { invalidated: counts.reduce((sum, count) => sum + count, 0) };
  });
}

function isInvalidations(value: unknown): value is { paths?: string[]; prefixes?: string[] } {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return false;
  const record = value as Record<string, unknown>;
  if (Object.keys(record).some((key) => !INVALIDATION_FIELDS.has(key))) return false;
  const list = (field: unknown, maxLength: number): boolean =>
    field === undefined || (Array.isArray(field) && field.length <= MAX_TARGETS && field.every((item) => typeof item === 'string' && item.length > 0 && item.length <= maxLength));
  return list(record.paths, 4096) && list(record.prefixes, 1024);
}
