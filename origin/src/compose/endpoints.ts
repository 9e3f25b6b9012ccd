/**
 * The origin's own endpoints under /.well-known/webpp/, each set in an encapsulated child
 * with its own slice of the options, in registration order. The endpoints of an opt-in
 * feature are registered by the feature's plugin (features/*.ts), like its response-path steps.
 */
import type { FastifyInstance } from 'fastify';
import type { OriginParts } from './parts.js';
import { pick } from '../options/slice.js';
import { publicRoutes } from '../routes/public.js';
import { managementRoutes } from '../routes/management.js';
import { peerRoutes } from '../routes/peer.js';
import { peerStateRoutes } from '../routes/peer-state.js';
import { peerContentRoutes } from '../routes/peer-content.js';
import { cacheRoutes } from '../routes/cache.js';

/** What a signed server-to-server route checks (http/cluster-auth-hooks.ts). */
const CLUSTER_CALL = ['clusterSecret', 'publicUrl', 'aliasUrls', 'maxClockSkewMs'] as const;
const RESERVED_PATHS = ['scriptPath', 'workerPath'] as const;

export interface EndpointSet {
  name: string;
  register: (app: FastifyInstance, parts: OriginParts) => PromiseLike<unknown>;
}

export const ENDPOINTS: readonly EndpointSet[] = [
  {
    name: 'public',
    register: (app, { options, directory, store, replicas, stats, killSwitch, sync, clientScripts, gauges }) =>
      app.register(publicRoutes, {
        options: pick(options, ['adminToken', 'logicalOrigin', 'publicStats', 'publicUrl', 'serveClientScripts', ...RESERVED_PATHS]),
        directory,
        store,
        replicas,
        stats,
        killSwitch,
        sync,
        clientScripts,
        gauges,
      }),
  },
  {
    name: 'management',
    register: (app, { options, directory, store, replicas, flushDirectory }) =>
      app.register(managementRoutes, { options: pick(options, ['adminToken', 'logicalOrigin', 'maxReplicaBytes', ...RESERVED_PATHS]), directory, store, replicas, flushDirectory }),
  },
  {
    name: 'peer',
    register: (app, { options, directory, replicas, flushDirectory }) =>
      app.register(peerRoutes, { options: pick(options, [...CLUSTER_CALL, 'maxReplicaBytes', ...RESERVED_PATHS]), directory, replicas, flushDirectory }),
  },
  {
    name: 'peer-state',
    register: (app, { options }) => app.register(peerStateRoutes, { options: pick(options, CLUSTER_CALL) }),
  },
  {
    name: 'peer-content',
    register: (app, { options, store, replicas }) =>
      app.register(peerContentRoutes, { options: pick(options, [...CLUSTER_CALL, 'contentRoot', 'maxReplicaBytes', ...RESERVED_PATHS]), store, replicas }),
  },
  {
    name: 'cache',
    register: (app, { options, memoryCache }) => app.register(cacheRoutes, { options: pick(options, ['adminToken', 'memoryCacheMaxEntryBytes']), cache: memoryCache }),
  },
];
