/**
 * The hooks that guard server-to-server endpoints (http/auth.ts), for an encapsulated
 * Fastify context: no cluster secret → 403 WEBPP_ERR_DISABLED; no or malformed signature →
 * 401 before the body is read; a signature that does not verify over the body, for this
 * server's public origin or one of its `aliasUrls`, within `maxClockSkewMs` → 403. Bodies
 * arrive as Buffers. Used by routes/peer.ts and every other peer endpoint.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { CLUSTER_AUTH_HEADER, parseClusterAuth, verifyClusterRequest } from './auth.js';
import { WEBPP_ERR_DISABLED, WEBPP_ERR_FORBIDDEN, WEBPP_ERR_UNAUTHORIZED } from '../errors.js';
import type { ResolvedOptions } from '../options.js';

export function bodyOf(request: FastifyRequest): Buffer {
  return Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
}

/** The cluster secret, or 403 WEBPP_ERR_DISABLED. */
export function clusterSecretOf(options: Pick<ResolvedOptions, 'clusterSecret'>): string {
  const secret = options.clusterSecret;
  if (secret === undefined) throw new WEBPP_ERR_DISABLED('Server-to-server calls are disabled: this server has no cluster secret');
  return secret;
}

export function addClusterAuthHooks(
  app: FastifyInstance,
  options: Pick<ResolvedOptions, 'clusterSecret' | 'publicUrl' | 'aliasUrls' | 'maxClockSkewMs'>,
  bodyLimitBytes: number,
): void {
  // A signature is valid only on the server it was made for (http/auth.ts).
  const ownOrigins = [options.publicUrl, ...options.aliasUrls];
  app.addHook('onRequest', async (request) => {
    clusterSecretOf(options);
    const parsed = parseClusterAuth(request.headers[CLUSTER_AUTH_HEADER] as string | undefined);
    if ('ok' in parsed && !parsed.ok) throw new WEBPP_ERR_UNAUTHORIZED(parsed.reason);
  });
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: bodyLimitBytes }, (_request, body, done) => {
    done(null, body);
  });
  app.addHook('preHandler', async (request) => {
    const result = verifyClusterRequest(
      clusterSecretOf(options),
      request.headers[CLUSTER_AUTH_HEADER] as string | undefined,
      { ownOrigins, method: request.method, pathAndQuery: request.url, body: bodyOf(request), headers: request.headers },
      Date.now(),
      options.maxClockSkewMs,
    );
    if (!result.ok) throw result.status === 401 ? new WEBPP_ERR_UNAUTHORIZED(result.reason) : new WEBPP_ERR_FORBIDDEN(result.reason);
  });
}
