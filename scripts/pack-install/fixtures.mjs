// The files the pack-and-install test writes into its fresh project, as a user would:
// a Fastify app that registers the origin plugin and one opt-in feature from its own entry
// point (@webpp/origin/batch) and imports another (@webpp/origin/replication), and a Workbox
// worker that imports
// @webpp/sw, with the esbuild script that bundles it.

/** Logical origin and replicas of the app's directory (only announced, never contacted). */
export const PUBLIC_URL = 'http://a.localhost:8081';
export const MIRROR_URL = 'http://b.localhost:8082';
export const BOUND_PATH = '/img/cat.jpg';

export const APP_FILE = 'app.mjs';
export const appSource = `import Fastify from 'fastify';
import { webppOrigin } from '@webpp/origin';
import webppBatch from '@webpp/origin/batch';
import webppReplication from '@webpp/origin/replication';

// Load-driven replication needs peers: here only its entry point is checked to resolve to a plugin.
if (typeof webppReplication !== 'function') throw new Error('@webpp/origin/replication is not a plugin');
const app = Fastify();
await app.register(webppOrigin, {
  publicUrl: ${JSON.stringify(PUBLIC_URL)},
  directory: {
    formatVersion: 1,
    entries: [{ logical: '/img/*', servers: [${JSON.stringify(PUBLIC_URL)}, ${JSON.stringify(MIRROR_URL)}] }],
  },
});
await app.register(webppBatch, { maxParts: 20 });
app.get('/', async (request, reply) =>
  reply.type('text/html; charset=utf-8').send('<!doctype html><title>t</title><img src=${JSON.stringify(BOUND_PATH)} alt="">'),
);
await app.listen({ host: '127.0.0.1', port: 0 });
console.log('listening ' + app.listeningOrigin);
const stop = () => app.close().then(() => process.exit(0));
process.once('SIGTERM', stop);
process.once('SIGINT', stop);
`;

export const WORKER_FILE = 'sw.js';
export const workerSource = `import { registerRoute } from 'workbox-routing';
import { ReplicaStrategy, replicaRouteMatcher } from '@webpp/sw';

const replicas = new ReplicaStrategy({ webpp: { timeoutCeilingMs: 5000 } });
registerRoute(replicaRouteMatcher, replicas, 'GET');
registerRoute(replicaRouteMatcher, replicas, 'HEAD');
`;

export const WORKER_BUNDLE_FILE = 'sw.bundle.js';
export const BUILD_FILE = 'build-sw.mjs';
export const buildSource = `import { build } from 'esbuild';

const result = await build({
  entryPoints: [${JSON.stringify(WORKER_FILE)}],
  outfile: ${JSON.stringify(WORKER_BUNDLE_FILE)},
  bundle: true,
  format: 'iife',
  target: ['chrome110'],
  define: { 'process.env.NODE_ENV': '"production"' },
  metafile: true,
  logLevel: 'error',
});
console.log(JSON.stringify(Object.keys(result.metafile.inputs)));
`;

/** A TypeScript user of the three packages: the published types resolve through `exports`. */
export const TYPES_FILE = 'check-types.ts';
export const typesSource = `import { decodeBindings, type BindingsDocument } from '@webpp/core';
import { webppOrigin, type WebppOriginOptions } from '@webpp/origin';
import webppMemoryCache, { type MemoryCacheOptions } from '@webpp/origin/memory-cache';
import webppReplication, { type ReplicationOptions } from '@webpp/origin/replication';
import { ReplicaStrategy, replicaRouteMatcher, type ReplicaStrategyOptions } from '@webpp/sw';

const decoded = decodeBindings('1.j.0.e30');
export const document: BindingsDocument | undefined = decoded.ok ? decoded.document : undefined;
export const options: WebppOriginOptions = { publicUrl: ${JSON.stringify(PUBLIC_URL)} };
export const plugin: typeof webppOrigin = webppOrigin;
export const cacheOptions: MemoryCacheOptions = { memoryCacheBytes: 1 << 20 };
export const cachePlugin: typeof webppMemoryCache = webppMemoryCache;
export const replicationOptions: ReplicationOptions = { autoReplicatePrefixes: ['/img/'] };
export const replicationPlugin: typeof webppReplication = webppReplication;
export const strategyOptions: ReplicaStrategyOptions = { webpp: { timeoutCeilingMs: 5000 } };
export const strategy: typeof ReplicaStrategy = ReplicaStrategy;
export const matcher: typeof replicaRouteMatcher = replicaRouteMatcher;
`;
export const TSCONFIG_FILE = 'tsconfig.json';
export const tsconfigSource = JSON.stringify(
  {
    compilerOptions: {
      target: 'ES2022',
      module: 'NodeNext',
      moduleResolution: 'NodeNext',
      lib: ['ES2022', 'DOM', 'WebWorker'],
      strict: true,
      noEmit: true,
      skipLibCheck: true,
      types: ['node'],
    },
    files: [TYPES_FILE],
  },
  null,
  2,
);
