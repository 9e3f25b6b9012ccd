/**
 * The in-process server of one replica, composed like startReplicaServer (origin/src/server.ts)
 * composes it: Fastify + the webppOrigin plugin + the site's routes + @fastify/static over the
 * replica's folder, on a socket bound beforehand (so the public URL, the emulator's, is known
 * before the plugin starts). Around the plugin: the fault hooks (faults.ts) and the test's own.
 */
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import Fastify, { type FastifyInstance, type FastifyServerOptions } from 'fastify';
import fastifyStatic from '@fastify/static';
import { webppOrigin } from '@webpp/origin';
import { faultsAfterOrigin, faultsBeforeOrigin, type FaultState } from './faults.js';
import type { ReplicaSetup } from './replica.js';

export async function buildOriginApp(server: Server, setup: ReplicaSetup, faults: FaultState, publicUrl: string, tls: boolean): Promise<FastifyInstance> {
  let ready = false;
  const app = Fastify({
    logger: false,
    ...(tls ? { http2: true, https: { allowHTTP1: true } } : {}),
    serverFactory: (handler: (request: IncomingMessage, response: ServerResponse) => void) => {
      // Until the app is ready, answer 503 as startReplicaServer's start gate does: a peer's
      // call that arrives mid-registration would otherwise throw inside Fastify's hook runner.
      server.on('request', (request: IncomingMessage, response: ServerResponse) => {
        if (ready) return handler(request, response);
        response.writeHead(503, { 'retry-after': '1' }).end();
      });
      return server;
    },
  } as FastifyServerOptions) as unknown as FastifyInstance;
  try {
    await app.register(faultsBeforeOrigin, { faults });
    await app.register(webppOrigin, { contentRoot: setup.root, ...setup.origin, publicUrl, dataDir: setup.dataDir });
    await app.register(faultsAfterOrigin, { faults });
    setup.configure?.(app);
    setup.routes?.(app);
    const fileHeaders = setup.fileHeaders;
    await app.register(fastifyStatic, {
      root: setup.root,
      index: ['index.html'],
      redirect: true,
      ...(fileHeaders ? { setHeaders: (reply, path) => void reply.headers(fileHeaders(path)) } : {}),
    });
    await app.ready();
    ready = true;
  } catch (error) {
    await app.close().catch(() => undefined);
    throw error;
  }
  return app;
}
