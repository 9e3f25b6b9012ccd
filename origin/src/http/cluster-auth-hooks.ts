/**
 * The hooks every encapsulated set of server-to-server routes registers (http/auth.ts for
 * the scheme): the signature's presence is checked before the body is read (401), its
 * validity once the body is in (403); bodies are read as raw buffers, since the signature
 * covers their bytes. Shared by routes/peer.ts and the routes of other peer features.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { CLUSTER_AUTH_HEADER, parseClusterAuth, verifyClusterRequest } from './auth.js';
import { WEBPP_ERR_DISABLED, WEBPP_ERR_FORBIDDEN, WEBPP_ERR_UNAUTHORIZED } from '../errors.js';
import type { ResolvedOptions } from '../options.js';

/** The raw body of a signed request (empty when it had none). */
export function signedBodyOf(request: FastifyRequest): Buffer {
  return Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
}

/**
 * Makes every route of `app` (an encapsulated context) require a valid cluster signature.
 * Returns the cluster secret getter (throws WEBPP_ERR_DISABLED without a secret).
 */
export function addClusterAuth(
  app: FastifyInstance,
  options: Pick<ResolvedOptions, 'clusterSecret' | 'publicUrl' | 'aliasUrls' | 'maxClockSkewMs'>,
  bodyLimitBytes: number,
): () => string {
  const secretOrThrow = (): string => {
    const secret = options.clusterSecret;
    if (secret === undefined) throw new WEBPP_ERR_DISABLED('Server-to-server calls are disabled: this server has no cluster secret');
    return secret;
  };
  // A signature is valid only on the server it was made for (http/auth.ts).
  const ownOrigins = [options.publicUrl, ...options.aliasUrls];
  app.addHook('onRequest', async (request) => {
    secretOrThrow();
    const parsed = parseClusterAuth(request.headers[CLUSTER_AUTH_HEADER] as string | undefined);
    if ('ok' in parsed && !parsed.ok) throw new WEBPP_ERR_UNAUTHORIZED(parsed.reason);
  });
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: bodyLimitBytes }, (_request, body, done) => {
    done(null, body);
  });
  app.addHook('preHandler', async (request) => {
    const result = verifyClusterRequest(
      secretOrThrow(),
      request.headers[CLUSTER_AUTH_HEADER] as string | undefined,
      { ownOrigins, method: request.method, pathAndQuery: request.url, body: signedBodyOf(request), headers: request.headers },
      Date.now(),
      options.maxClockSkewMs,
    );
    if (!result.ok) throw result.status === 401 ? new WEBPP_ERR_UNAUTHORIZED(result.reason) : new WEBPP_ERR_FORBIDDEN(result.reason);
  });
  return secretOrThrow;
}
