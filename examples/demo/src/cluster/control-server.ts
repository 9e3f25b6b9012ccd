/**
 * The demo's control endpoint, for the dashboard's buttons: list the replica servers, stop,
 * restart, slow down or restore one. Loopback only; every call needs the per-run bearer
 * token (compared in constant time); CORS admits only the replica origins.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import Fastify, { type FastifyInstance } from 'fastify';
import type { ReplicaView } from '../dashboard/model.js';
import { MachineLoad } from './machine-load.js';

export type ReplicaAction = 'stop' | 'start' | 'slow' | 'restore';

export interface ControlTarget {
  replicas(): ReplicaView[];
  act(replicaId: string, action: ReplicaAction): Promise<ReplicaView>;
  /** Origins allowed to call the endpoint from a browser (the replica origins). */
  allowedOrigins(): string[];
}

export interface ControlServer {
  /** "http://127.0.0.1:PORT". */
  readonly url: string;
  readonly token: string;
  close(): Promise<void>;
}

const ACTIONS: readonly ReplicaAction[] = ['stop', 'start', 'slow', 'restore'];

function digest(value: string): Buffer {
  return createHash('sha256').update(value).digest();
}

/** Constant-time check of an "Authorization: Bearer <token>" header. */
export function bearerMatches(header: string | undefined, token: string): boolean {
  const presented = /^Bearer ([A-Za-z0-9_-]{1,200})$/.exec(header ?? '')?.[1] ?? '';
  // Hash both sides so the comparison has a fixed length whatever was presented.
  return timingSafeEqual(digest(presented), digest(token)) && presented.length > 0;
}

export async function startControlServer(target: ControlTarget, options: { port?: number; token?: string } = {}): Promise<ControlServer> {
  const token = options.token ?? randomBytes(18).toString('base64url');
  const app: FastifyInstance = Fastify({ logger: false, bodyLimit: 1024 });
  // The emulator and the replicas run in this process: how late its timers fire tells whether the machine is the bottleneck.
  const machine = new MachineLoad();
  app.addHook('onClose', async () => machine.close());

  app.addHook('onRequest', async (request, reply) => {
    const origin = request.headers.origin;
    if (origin !== undefined) {
      if (!target.allowedOrigins().includes(origin)) {
        return reply.code(403).send({ code: 'WEBPP_ERR_DEMO_ORIGIN', message: `origin ${origin} may not control the demo` });
      }
      reply.header('access-control-allow-origin', origin);
      reply.header('vary', 'origin');
    }
    if (request.method === 'OPTIONS') {
      reply.header('access-control-allow-methods', 'GET, POST');
      reply.header('access-control-allow-headers', 'authorization, content-type');
      reply.header('access-control-max-age', '600');
      return reply.code(204).send();
    }
    if (!bearerMatches(request.headers.authorization, token)) {
      return reply.code(401).header('www-authenticate', 'Bearer realm="webpp-demo"').send({ code: 'WEBPP_ERR_DEMO_AUTH', message: 'missing or wrong control token' });
    }
    return undefined;
  });

  app.get('/api/replicas', async () => ({ replicas: target.replicas(), machine: machine.view() }));

  app.post<{ Params: { id: string; action: string } }>(
    '/api/replicas/:id/:action',
    {
      schema: {
        params: {
          type: 'object',
          required: ['id', 'action'],
          properties: { id: { type: 'string', pattern: '^[a-z0-9-]{1,32}$' }, action: { type: 'string', enum: [...ACTIONS] } },
        },
      },
    },
    async (request, reply) => {
      const { id, action } = request.params;
      if (!target.replicas().some((replica) => replica.id === id)) {
        return reply.code(404).send({ code: 'WEBPP_ERR_DEMO_REPLICA', message: `no replica "${id}"` });
      }
      return { replica: await target.act(id, action as ReplicaAction) };
    },
  );

  // Only loopback, never another interface.
  await app.listen({ host: '127.0.0.1', port: options.port ?? 0 });
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  return {
    url: `http://127.0.0.1:${port}`,
    token,
    close: () => app.close(),
  };
}
