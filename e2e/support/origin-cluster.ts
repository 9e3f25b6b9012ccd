/**
 * Replica servers built from the real @webpp/origin plugin (the integration of both halves):
 * each is Fastify + `webppOrigin` + @fastify/static over one site folder, on 127.0.0.1 with
 * an ephemeral port and its own `<name>.localhost` origin. The sockets are bound first, so
 * the replication directory can name every server's real URL before the plugins start.
 * A hook of this fixture injects a per-server delay and logs requests; everything else is
 * the origin's own behaviour (bindings header, HTML pre-processing, CORS, script serving).
 * With `tls`, every server speaks HTTPS with HTTP/2 and HTTP/1.1 (ALPN), Fastify in its
 * http2 + https mode over the pre-bound socket: `https://<name>.localhost:<port>` origins.
 */
import { createServer } from 'node:http';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { createSecureServer } from 'node:http2';
import type { AddressInfo, Socket } from 'node:net';
import Fastify from 'fastify';
import type { FastifyHttpOptions, FastifyInstance } from 'fastify';
import fastifyStatic from '@fastify/static';
import { webppOrigin } from '@webpp/origin';

export interface OriginReplica {
  name: string;
  origin: string;
  delayMs: number;
  /** Requests as the server saw them; httpVersion '2.0' for HTTP/2. */
  log: { method: string; url: string; httpVersion: string }[];
  app: FastifyInstance;
  server: Server;
}

export interface OriginClusterOptions {
  /** Folder with the site, served by every replica. */
  root: string;
  names?: string[];
  delaysMs?: Record<string, number>;
  /** Serve HTTPS + HTTP/2 with this certificate (valid for every <name>.localhost). */
  tls?: { cert: string; key: string };
  /** Called with each Fastify app after the plugin is registered (extra hooks for a test, run after the plugin's). */
  afterPlugin?: (app: FastifyInstance, name: string) => void;
  /** SHA-256 digests of the site's files in the bindings header (the origin's default: off). */
  contentDigests?: boolean;
  /**
   * Per replica name: hooks added after the webpp plugin, so an onSend hook here sees (and
   * may replace) what the origin sends: a hostile or broken replica.
   */
  configure?: Record<string, (app: FastifyInstance) => void>;
  /** The directory's entries, from the servers' origins by name. Default: "/*" on every server. */
  entries?: (origins: Record<string, string>) => { logical: string; servers: string[] }[];
  /** The origin's batch transmission (docs/batching.md); default off. */
  batch?: boolean;
}

export interface OriginCluster {
  replicas: OriginReplica[];
  primary: OriginReplica;
  replica(name: string): OriginReplica;
  logicalUrl(path: string): string;
  kill(name: string): Promise<void>;
  stop(): Promise<void>;
}

function listen(server: Server): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve((server.address() as AddressInfo).port));
  });
}

export async function startOriginCluster(options: OriginClusterOptions): Promise<OriginCluster> {
  const names = options.names ?? ['a', 'b', 'c'];
  const tls = options.tls;
  // An Http2SecureServer is not an http.Server, but it is what Fastify's http2 mode runs on.
  const servers = names.map(() => (tls === undefined ? createServer() : (createSecureServer({ ...tls, allowHTTP1: true }) as unknown as Server)));
  // Every connection of each server, so that kill() and stop() end HTTP/2 sessions too.
  const sockets = servers.map((server) => {
    const open = new Set<Socket>();
    server.on('connection', (socket: Socket) => {
      open.add(socket);
      socket.once('close', () => open.delete(socket));
    });
    return open;
  });
  const destroyConnections = (server: Server): void => {
    for (const socket of sockets[servers.indexOf(server)] ?? []) socket.destroy();
  };
  const ports = await Promise.all(servers.map(listen));
  const scheme = tls === undefined ? 'http' : 'https';
  const origins = names.map((name, i) => `${scheme}://${name}.localhost:${ports[i]}`);
  const logicalOrigin = origins[0] as string;
  // Every file of the site is replicated on every server (a directory wildcard).
  const byName = Object.fromEntries(names.map((name, i) => [name, origins[i] as string]));
  const entries = options.entries?.(byName) ?? [{ logical: '/*', servers: origins }];
  const directory = { formatVersion: 1 as const, logicalOrigin, entries };

  const replicas: OriginReplica[] = [];
  const closeAll = async (): Promise<void> => {
    await Promise.all(
      replicas.map(async (replica) => {
        await replica.app.close().catch(() => undefined);
        destroyConnections(replica.server);
        if (replica.server.listening) await new Promise<void>((done) => replica.server.close(() => done()));
      }),
    );
    for (const server of servers) if (server.listening) server.close();
  };
  try {
    for (const [i, name] of names.entries()) {
      const server = servers[i] as Server;
      const app = Fastify({
        logger: false,
        ...(tls === undefined ? {} : { http2: true, https: { allowHTTP1: true } }),
        serverFactory: (handler: (request: IncomingMessage, response: ServerResponse) => void) => {
          server.on('request', handler);
          return server;
        },
        // One options object for both modes (the http2 server is typed as Server above).
      } as FastifyHttpOptions<Server>) as unknown as FastifyInstance;
      const replica: OriginReplica = { name, origin: origins[i] as string, delayMs: options.delaysMs?.[name] ?? 0, log: [], app, server };
      replicas.push(replica);
      app.addHook('onRequest', async (request) => {
        replica.log.push({ method: request.method, url: request.url, httpVersion: request.raw.httpVersion });
        if (replica.delayMs > 0) await new Promise((resolve) => setTimeout(resolve, replica.delayMs));
      });
      await app.register(webppOrigin, {
        publicUrl: replica.origin,
        logicalOrigin,
        directory,
        contentRoot: options.root,
        contentDigests: options.contentDigests ?? false,
        ...(options.batch ? { batch: true } : {}),
      });
      options.configure?.[name]?.(app);
      options.afterPlugin?.(app, name);
      await app.register(fastifyStatic, { root: options.root, index: ['index.html'] });
      await app.ready();
    }
  } catch (error) {
    await closeAll();
    throw error;
  }

  const replica = (name: string): OriginReplica => {
    const found = replicas.find((candidate) => candidate.name === name);
    if (!found) throw new Error(`no replica named ${name}`);
    return found;
  };
  return {
    replicas,
    primary: replicas[0] as OriginReplica,
    replica,
    logicalUrl: (path) => `${logicalOrigin}${path}`,
    kill: async (name) => {
      const victim = replica(name);
      destroyConnections(victim.server);
      await new Promise<void>((done) => victim.server.close(() => done()));
    },
    stop: closeAll,
  };
}
