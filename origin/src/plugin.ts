/**
 * webppOrigin: the Fastify plugin that turns a web server into a Web++ server (paper
 * Section 5). Register it before (or beside) whatever serves the content:
 *
 *   await app.register(webppOrigin, { publicUrl: 'https://a.example.org', adminToken, dataDir });
 *   await app.register(fastifyStatic, { root: './public' });
 *
 * It is wrapped with fastify-plugin, so its hooks see every route of the app; its own
 * endpoints live in encapsulated children under /.well-known/webpp/. This file only composes:
 * the data folder (compose/data-folder.ts), the server's parts (compose/parts.ts), the
 * response path as one table (compose/response-path.ts, run by compose/path-hooks.ts), the
 * endpoints (compose/endpoints.ts), the opt-in features its options turn on
 * (compose/features.ts: the plugins of @webpp/origin/batch, /memory-cache, /client-aggregate,
 * /replication, which an app may register itself instead) and the timers started when the app is ready
 * (compose/lifecycle.ts).
 */
import fp from 'fastify-plugin';
import type { FastifyInstance } from 'fastify';
import { resolveOptions, type WebppOriginOptions } from './options.js';
import { withDirectoryLogicalOrigin } from './directory/logical-origin.js';
import { declareMemoryCacheRequest } from './cache/cache-plugin.js';
import { openDataFolder } from './compose/data-folder.js';
import { buildParts } from './compose/parts.js';
import { enabledSteps, rankInTable } from './compose/response-path.js';
import { declareResponsePath } from './compose/path-hooks.js';
import { declareOriginParts } from './features/origin-context.js';
import { FEATURES } from './compose/features.js';
import { ENDPOINTS } from './compose/endpoints.js';
import { originApi, registerLifecycle } from './compose/lifecycle.js';

async function webppOriginPlugin(app: FastifyInstance, rawOptions: WebppOriginOptions): Promise<void> {
  // Without logicalOrigin, the directory file's (directory/logical-origin.ts).
  const options = resolveOptions(await withDirectoryLogicalOrigin(rawOptions));
  const folder = await openDataFolder(options.dataDir, app.log.child({ plugin: 'webpp-origin' }));
  try {
    const parts = await buildParts(options, folder);
    app.decorate('webpp', originApi(parts));
    declareOriginParts(app, parts);
    declareResponsePath(app, rankInTable);
    declareMemoryCacheRequest(app); // request state of the memory cache, before any route
    for (const step of enabledSteps(options)) await step.register?.(app, parts);
    for (const endpoints of ENDPOINTS) await endpoints.register(app, parts);
    for (const feature of FEATURES) await feature.registerFor(app, options);
    registerLifecycle(app, parts);
  } catch (error) {
    await folder.dataDirLock?.release(); // a server that failed to start leaves its folder free
    throw error;
  }
}

/** The webpp origin plugin (Fastify 5). */
export const webppOrigin = fp(webppOriginPlugin, {
  fastify: '5.x',
  name: '@webpp/origin',
});
