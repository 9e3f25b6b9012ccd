/**
 * The Fastify test servers the worker's tests run against: real HTTP on an ephemeral
 * loopback port, answering GET and HEAD of every path, each request logged first.
 */
import type { AddressInfo } from 'node:net';
import Fastify from 'fastify';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';

export interface TestServer {
  origin: string;
  app: FastifyInstance;
  /** "METHOD /path?query" of every request, in order. */
  log: string[];
}

/** Starts a server whose state is `state` (the handler and the test may change it) and whose answers come from `handler`. */
export async function startServer<T extends TestServer>(
  state: Omit<T, keyof TestServer>,
  handler: (server: T, request: FastifyRequest, reply: FastifyReply) => Promise<unknown>,
): Promise<T> {
  const app = Fastify({ forceCloseConnections: true });
  const server = { ...state, origin: '', app, log: [] as string[] } as unknown as T;
  app.route({
    method: ['GET', 'HEAD'],
    url: '/*',
    handler: async (request, reply) => {
      server.log.push(`${request.method} ${request.url}`);
      return handler(server, request, reply);
    },
  });
  await app.listen({ port: 0, host: '127.0.0.1' });
  server.origin = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
  return server;
}

export async function closeServers(servers: readonly TestServer[]): Promise<void> {
  for (const server of servers) {
    server.app.server.closeAllConnections();
    await server.app.close();
  }
}
