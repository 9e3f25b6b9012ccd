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
 * already carries the real port. Until the app is ready, the socket answers every request
 * with 503 and `Retry-After` (start-gate.ts): peers, health checks and browsers that arrive
 * during start-up are told to come back, and never reach a half-built Fastify instance.
 *
 * With `tls` the socket is an HTTP/2 server with TLS that also speaks HTTP/1.1 (ALPN picks
 * per connection; `allowHTTP1`), and Fastify runs in its http2 + https mode over it. The
 * certificate and key are reloaded when their files change, or on `reloadTls()`
 * (tls-credentials.ts).
 */
import { createServer, type Server } from 'node:http';
import { createSecureServer, type Http2SecureServer } from 'node:http2';
import type { AddressInfo, Socket } from 'node:net';
import { resolve } from 'node:path';
import Fastify, { type FastifyBaseLogger, type FastifyInstance, type FastifyServerOptions } from 'fastify';
import fastifyStatic from '@fastify/static';
import httpProxy from '@fastify/http-proxy';
import { webppOrigin } from './plugin.js';
import type { WebppOriginOptions } from './options.js';
import { WEBPP_ERR_BAD_OPTIONS, WEBPP_ERR_UPSTREAM_FAILED } from './errors.js';
import { StartGate, type GateHandler as StartGateTarget } from './http/start-gate.js';
import { checkTlsFileOptions, readTlsCredentials, TlsReloader, type TlsFileOptions } from './http/tls-credentials.js';
import { InFlightRequests } from './http/drain.js';
import { isHiddenPath } from './http/hidden-paths.js';
import { decodeReservedEscapesForStatic } from './http/static-path-spelling.js';
import { forwardedHeaders, rewriteUpstreamLocation } from './http/proxy-headers.js';
import { HtmlCharsets } from './http/html-charset.js';
import type { Static } from 'typebox';
import { serverOptionsSchema } from './options/server-schema.js';
import { compileOptions, optionPath } from './options/compile-options.js';
import type { Resolved } from './options/resolved.js';
import { WEBPP_INTERNALS } from './options/internals.js';

/**
 * The plugin's options (publicUrl optional) and the server's own (options/server-schema.ts:
 * root, proxyUpstream, host, port, publicHost), plus what is code or files.
 */
export type ReplicaServerOptions = Omit<WebppOriginOptions, 'publicUrl'> &
  Static<typeof serverOptionsSchema> & {
    /** Public URL of this server. Default http(s)://<publicHost or host>:<port>. */
    publicUrl?: string;
    /**
     * Serve HTTPS, with HTTP/2 and HTTP/1.1 (ALPN), from these PEM files; they are reloaded
     * when they change. Without it the server speaks plain HTTP/1.1.
     */
    tls?: TlsFileOptions;
    /** Fastify logger: false (default), true, pino options, or a logger instance. */
    logger?: FastifyServerOptions['logger'] | FastifyBaseLogger;
    /** Extra routes (dynamic pages, APIs) registered after the plugin and before static files. */
    routes?: (app: FastifyInstance) => void | Promise<void>;
  };

const serverOptions = compileOptions<Resolved<typeof serverOptionsSchema>>(serverOptionsSchema);

export interface ReplicaServer {
  /** The public URL (origin) of this server. */
  url: string;
  port: number;
  app: FastifyInstance;
  /**
   * Reads the TLS certificate and key files again (the CLI calls it on SIGHUP). True when
   * the new ones are in use; false when they failed to load and the old ones stay. Absent
   * without `tls`.
   */
  reloadTls?: (reason?: string) => boolean;
  close(): Promise<void>;
}

/** A request path as the file system sees it (`/%2Eenv` is `/.env`); undecodable stays as is. */
function decodePath(path: string): string {
  try {
    return decodeURIComponent(path);
  } catch {
    return path;
  }
}

/** Fastify's default http2SessionTimeout. */
const HTTP2_SESSION_IDLE_MS = 72_000;

function listen(server: Server | Http2SecureServer, port: number, host: string): Promise<void> {
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
  const { publicUrl, logger = false, routes, tls, ...rest } = options;
  const isServerOption = ([key]: [string, unknown]): boolean => key in serverOptionsSchema.properties;
  const checked = serverOptions.check(Object.fromEntries(Object.entries(rest).filter(isServerOption)), optionPath('options'));
  if (!checked.ok) throw new WEBPP_ERR_BAD_OPTIONS(checked.problems.join('; '));
  const { root, proxyUpstream, host, port, publicHost, shutdownDrainMs } = checked.value;
  const webpp = {
    ...Object.fromEntries(Object.entries(rest).filter((entry) => !isServerOption(entry))),
    [WEBPP_INTERNALS]: (rest as { [WEBPP_INTERNALS]?: unknown })[WEBPP_INTERNALS], // tests' overrides of the constants (options/internals.ts)
  } as Omit<WebppOriginOptions, 'publicUrl'>;
  if (root !== undefined && proxyUpstream !== undefined) {
    throw new WEBPP_ERR_BAD_OPTIONS('root and proxyUpstream are exclusive: serve a folder or proxy a server, not both');
  }
  const gate = new StartGate();
  // Fails before binding when the files are missing or do not form a pair, or watchIntervalMs is not a timer's.
  if (tls !== undefined) checkTlsFileOptions(tls);
  const credentials = tls === undefined ? undefined : readTlsCredentials(tls);
  const server: Server | Http2SecureServer = credentials === undefined
    ? createServer(gate.handler)
    : createSecureServer({ ...credentials, allowHTTP1: true }, gate.handler);
  // Idle HTTP/2 sessions are closed as Fastify's own http2 server does (http2SessionTimeout).
  if (credentials !== undefined) {
    (server as Http2SecureServer).on('session', (session) => session.setTimeout(HTTP2_SESSION_IDLE_MS, () => session.close()));
  }
  // Every connection, so that close() ends keep-alive HTTP/1.1 and HTTP/2 sessions alike.
  const sockets = new Set<Socket>();
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  const inFlight = new InFlightRequests(server);
  await listen(server, port, host);
  const boundPort = (server.address() as AddressInfo).port;
  const urlHost = publicHost ?? (host.includes(':') ? `[${host}]` : host === '0.0.0.0' ? '127.0.0.1' : host);
  const url = publicUrl ?? `${tls === undefined ? 'http' : 'https'}://${urlHost}:${boundPort}`;

  const loggerOptions = typeof logger === 'object' && logger !== null && 'child' in logger && typeof logger.child === 'function'
    ? { loggerInstance: logger }
    : { logger: logger as FastifyServerOptions['logger'] };
  const app = Fastify({
    ...loggerOptions,
    // Fastify's own HTTP/2 + HTTPS mode (request.raw is an Http2ServerRequest, or an
    // IncomingMessage on an HTTP/1.1 connection); the server is the one bound above.
    ...(tls === undefined ? {} : { http2: true as const, https: { allowHTTP1: true } }),
    // Fastify's handler is only reached through the gate, which opens once the app is ready.
    serverFactory: (handler: StartGateTarget) => {
      gate.setHandler(handler);
      return server as Server;
    },
  } as FastifyServerOptions) as unknown as FastifyInstance;
  const reloader = tls === undefined || credentials === undefined ? undefined : new TlsReloader(server as Http2SecureServer, tls, app.log, credentials);

  const close = async (): Promise<void> => {
    reloader?.close();
    await inFlight.drain(server, shutdownDrainMs); // requests in flight finish first (http/drain.ts)
    await app.close();
    for (const socket of sockets) socket.destroy();
    if (server.listening) await new Promise<void>((done) => server.close(() => done()));
  };

  try {
    await app.register(webppOrigin, { ...(root === undefined ? {} : { contentRoot: resolve(root) }), ...webpp, publicUrl: url });
    if (routes !== undefined) await app.register(async (child) => routes(child));
    if (root !== undefined) {
      // Static files may be answered from the memory cache (cache/cache-plugin.ts), when it is on.
      await app.register(async (files) => {
        files.addHook('onRoute', (route) => void (route.config = { ...route.config, webppCache: { source: 'static' } }));
        // `/img/b%402x.jpg` is the file `b@2x.jpg`, as for a plain static server (http/static-path-spelling.ts).
        files.addHook('onRoute', decodeReservedEscapesForStatic);
        const charsets = new HtmlCharsets();
        await files.register(fastifyStatic, {
          root: resolve(root),
          index: ['index.html'],
          redirect: true,
          // .env, .git/… are not published (.well-known is): http/hidden-paths.ts.
          allowedPath: (path) => !isHiddenPath(decodePath(path)),
          // A page's own <meta charset> instead of the "utf-8" @fastify/static gives every .html file (html-charset.ts).
          setHeaders: (reply, path, stat) => {
            if (!String(reply.getHeader('content-type')).startsWith('text/html')) return;
            const charset = charsets.of(path, stat.size, stat.mtimeMs);
            if (charset !== undefined) reply.header('content-type', `text/html; charset=${charset}`);
          },
        });
      });
    } else if (proxyUpstream !== undefined) {
      await app.register(httpProxy, {
        upstream: proxyUpstream,
        // Fresh upstream answers may be kept in the memory cache, when it is on.
        config: { webppCache: { source: 'proxy' } },
        replyOptions: {
          // Ask the upstream for an uncompressed body, so that its HTML can be pre-processed.
          rewriteRequestHeaders: (request, headers) => ({ ...forwardedHeaders(headers, request, url), 'accept-encoding': 'identity' }),
          // Redirects to the upstream's own address point at this server (http/proxy-headers.ts).
          rewriteHeaders: (headers) => (typeof headers['location'] === 'string' ? { ...headers, location: rewriteUpstreamLocation(headers['location'], proxyUpstream, url) } : headers),
          // An upstream that fails is a 502 (a 503/504 kept) with a code; its address stays in the log.
          onError: (reply, { error }) => {
            reply.log.error({ err: error }, 'webpp proxy: the upstream did not answer');
            const { statusCode, code } = error as Error & { statusCode?: number; code?: string };
            const status = statusCode === 503 || statusCode === 504 ? statusCode : 502;
            const failure = new WEBPP_ERR_UPSTREAM_FAILED(code ?? 'error');
            failure.statusCode = status;
            void reply.send(failure);
          },
        },
      });
    }
    await app.ready();
    gate.open(app.log);
    reloader?.watch();
  } catch (error) {
    await close().catch(() => undefined);
    throw error;
  }
  app.log.info({ url, listen: `${host}:${boundPort}`, root, proxyUpstream, tls: tls !== undefined }, 'webpp-origin listening');
  const reloadTls = reloader === undefined ? undefined : (reason = 'reload requested') => reloader.reload(reason);
  return { url, port: boundPort, app, close, ...(reloadTls === undefined ? {} : { reloadTls }) };
}
