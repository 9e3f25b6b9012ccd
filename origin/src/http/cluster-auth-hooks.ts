/**
 * The hooks that guard a set of server-to-server routes (signature scheme in auth.ts):
 * the signature's presence is checked before the body is read (401), its validity once the
 * body is in (403); either way the handler does not run. Bodies are read as raw buffers,
 * because the signature covers their exact bytes. Register inside an encapsulated plugin.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { CLUSTER_AUTH_HEADER, parseClusterAuth, verifyClusterRequest } from './auth.js';
import { WEBPP_ERR_DISABLED, WEBPP_ERR_FORBIDDEN, WEBPP_ERR_UNAUTHORIZED } from '../errors.js';
import type { ResolvedOptions } from '../options.js';

/** The raw body of a request read by these hooks (empty when there is none). */
export function bodyOf(request: FastifyRequest): Buffer {
  return Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
}

export function requireClusterSignature(app: FastifyInstance, options: ResolvedOptions, maxBodyBytes: number): void {
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
  app.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: maxBodyBytes }, (_request, body, done) => {
    done(null, body);
  });
  app.addHook('preHandler', async (request) => {
    const result = verifyClusterRequest(
      secretOrThrow(),
      request.headers[CLUSTER_AUTH_HEADER] as string | undefined,
      { ownOrigins, method: request.method, pathAndQuery: request.url, body: bodyOf(request), headers: request.headers },
      Date.now(),
      options.maxClockSkewMs,
    );
    if (!result.ok) throw result.status === 401 ? new WEBPP_ERR_UNAUTHORIZED(result.reason) : new WEBPP_ERR_FORBIDDEN(result.reason);
  });
}
