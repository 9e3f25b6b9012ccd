#!/usr/bin/env node
// One replica of the example: the site folder with the webpp plugin, but with the site's own
// worker (/sw.js) instead of the bundled /webpp.js. Two replicas on one machine:
//   PORT=7381 PUBLIC_HOST=a.localhost PEERS=http://b.localhost:7382 node server.js
//   PORT=7382 PUBLIC_HOST=b.localhost PEERS=http://a.localhost:7381 node server.js
import { startReplicaServer } from '@webpp/origin';
import { SITE_DIR } from './build.mjs';

/**
 * Starts one replica; the tests call it too.
 * @param {{ port?: number, publicUrl?: string, publicHost?: string, peers?: string[], logicalOrigin?: string, servers?: string[], dataDir?: string, clusterSecret?: string, logger?: boolean }} options
 */
export function startSite({ port = 0, publicUrl, publicHost, peers = [], logicalOrigin, servers, dataDir, clusterSecret, logger = false }) {
  return startReplicaServer({
    root: SITE_DIR,
    port,
    publicUrl,
    publicHost,
    logicalOrigin,
    peers,
    clusterSecret,
    dataDir,
    logger,
    // The site registers its own Workbox worker: no injected script, no bundled worker.
    injectScript: false,
    serveClientScripts: false,
    directory: { formatVersion: 1, logicalOrigin, entries: ['/', '/index.html', '/img/*', '/style.css', '/app.js'].map((logical) => ({ logical, servers })) },
    routes: (app) => {
      app.get('/api/time', async () => ({ now: new Date().toISOString() }));
    },
  });
}

if (process.argv[1] === new URL(import.meta.url).pathname) {
  const port = Number(process.env.PORT ?? 7381);
  const publicHost = process.env.PUBLIC_HOST ?? 'a.localhost';
  const peers = (process.env.PEERS ?? '').split(',').filter(Boolean);
  const self = `http://${publicHost}:${port}`;
  const logicalOrigin = process.env.LOGICAL_ORIGIN ?? 'http://a.localhost:7381';
  const server = await startSite({
    port,
    publicHost,
    peers,
    logicalOrigin,
    servers: [self, ...peers],
    dataDir: `.webpp-data/${publicHost}`,
    clusterSecret: process.env.WEBPP_CLUSTER_SECRET,
    logger: { level: 'info' },
  });
  console.log(`Notebook replica on ${server.url}/`);
  for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => server.close().then(() => process.exit(0)));
}
