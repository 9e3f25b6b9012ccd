/**
 * startReplicaServer: a complete Web++ replica server in one call — Fastify + the webpp
 * plugin + either @fastify/static over a folder or, in proxy mode, @fastify/http-proxy in
 * front of an existing web server (the paper's "server-side proxy" configuration, Section
 * 5). The CLI uses it; tests and demos use it to start clusters:
 *
 *   const a = await startReplicaServer({ root: './site', publicHost: 'a.localhost', adminToken });
 *   console.log(a.url); // http://a.localhost:39017
 *   await a.close();
 *
 * The socket is bound before the plugin is set up, so that with port 0 the public URL
 * already carries the real port.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { resolve } from 'node:path';
import Fastify, { type FastifyBaseLogger, type FastifyInstance, type FastifyServerOptions } from 'fastify';
import fastifyStatic from '@fastify/static';
import httpProxy from '@fastify/http-proxy';
import { webppOrigin } from './plugin.js';
import type { WebppOriginOptions } from './options.js';
import { WEBPP_ERR_BAD_OPTIONS } from './errors.js';

export interface ReplicaServerOptions extends Omit<WebppOriginOptions, 'publicUrl'> {
  /** Folder served with @fastify/static. */
  root?: string;
  /** Proxy mode: forward every request not handled by webpp to this upstream server. */
  proxyUpstream?: string;
  /** Listen address. Default 127.0.0.1. */
  host?: string;
  /** Listen port. Default 0 (an ephemeral port). */
  port?: number;
  /** Public URL of this server. Default http://<publicHost or host>:<port>. */
  publicUrl?: string;
  /** Host name for the default public URL, e.g. "a.localhost". */
  publicHost?: string;
  /** Fastify logger: false (default), true, pino options, or a logger instance. */
  logger?: boolean | FastifyServerOptions['logger'] | FastifyBaseLogger;
  /** Extra routes (dynamic pages, APIs) registered after the plugin and before static files. */
  routes?: (app: FastifyInstance) => void | Promise<void>;
}

export interface ReplicaServer {
  /** The public URL (origin) of this server. */
  url: string;
  port: number;
  app: FastifyInstance;
  close(): Promise<void>;
}

function listen(server: Server, port: number, host: string): Promise<void> {
  return new Promise((resolvePromise, reject) => {
    const onError = (error: Error): void => reject(error);
    server.once('error', onError);
    server.listen(port, host, () => {
      server.off('error', onError);
      resolvePromise();
    });
  });
}

export async function startReplicaServer(options: ReplicaServerOptions = {}): Promise<ReplicaServer> {
  const { root, proxyUpstream, host = '127.0.0.1', port = 0, publicUrl, publicHost, logger = false, routes, ...webpp } = options;
  if (root !== undefined && proxyUpstream !== undefined) {
    throw new WEBPP_ERR_BAD_OPTIONS('root and proxyUpstream are exclusive: serve a folder or proxy a server, not both');
  }
  if (proxyUpstream !== undefined && !/^https?:\/\/[^/]+/.test(proxyUpstream)) {
    throw new WEBPP_ERR_BAD_OPTIONS(`proxyUpstream must be an http(s) URL (got ${JSON.stringify(proxyUpstream)})`);
  }
  const server = createServer();
  await listen(server, port, host);
  const boundPort = (server.address() as AddressInfo).port;
  const urlHost = publicHost ?? (host.includes(':') ? `[${host}]` : host === '0.0.0.0' ? '127.0.0.1' : host);
  const url = publicUrl ?? `http://${urlHost}:${boundPort}`;

  const loggerOptions = typeof logger === 'object' && logger !== null && 'child' in logger && typeof logger.child === 'function'
    ? { loggerInstance: logger as FastifyBaseLogger }
    : { logger: logger as FastifyServerOptions['logger'] };
  const app = Fastify({
    ...loggerOptions,
    serverFactory: (handler: (request: IncomingMessage, response: ServerResponse) => void) => {
      server.on('request', handler);
      return server;
    },
  }) as unknown as FastifyInstance;

  const close = async (): Promise<void> => {
    await app.close();
    server.closeAllConnections();
    if (server.listening) await new Promise<void>((done) => server.close(() => done()));
  };

  try {
    await app.register(webppOrigin, { ...(root === undefined ? {} : { contentRoot: resolve(root) }), ...webpp, publicUrl: url });
    if (routes !== undefined) await app.register(async (child) => routes(child));
    if (root !== undefined) {
      await app.register(fastifyStatic, { root: resolve(root), index: ['index.html'], redirect: true });
    } else if (proxyUpstream !== undefined) {
      await app.register(httpProxy, {
        upstream: proxyUpstream,
        replyOptions: {
          // Ask the upstream for an uncompressed body, so that its HTML can be pre-processed.
          rewriteRequestHeaders: (_request, headers) => ({ ...headers, 'accept-encoding': 'identity' }),
        },
      });
    }
    await app.ready();
  } catch (error) {
    await close().catch(() => undefined);
    throw error;
  }
  app.log.info({ url, listen: `${host}:${boundPort}`, root, proxyUpstream }, 'webpp-origin listening');
  return { url, port: boundPort, app, close };
}
