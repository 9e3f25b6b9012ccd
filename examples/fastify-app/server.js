#!/usr/bin/env node
// Runs one replica of the Pantry app. Two replicas on one machine:
//   PORT=7181 PUBLIC_URL=http://a.localhost:7181 PEERS=http://b.localhost:7182 node server.js
//   PORT=7182 PUBLIC_URL=http://b.localhost:7182 PEERS=http://a.localhost:7181 node server.js
// Both need the same WEBPP_CLUSTER_SECRET; WEBPP_ADMIN_TOKEN enables the management API.
import { buildApp } from './app.js';

const port = Number(process.env.PORT ?? 7181);
const publicUrl = process.env.PUBLIC_URL ?? `http://a.localhost:${port}`;
const peers = (process.env.PEERS ?? '').split(',').map((peer) => peer.trim()).filter(Boolean);
const logicalOrigin = process.env.LOGICAL_ORIGIN ?? 'http://a.localhost:7181';
const servers = [publicUrl, ...peers];

const app = await buildApp({
  logger: { level: process.env.LOG_LEVEL ?? 'info' },
  webpp: {
    publicUrl,
    logicalOrigin,
    peers,
    clusterSecret: process.env.WEBPP_CLUSTER_SECRET,
    adminToken: process.env.WEBPP_ADMIN_TOKEN,
    dataDir: process.env.DATA_DIR ?? `.webpp-data/${new URL(publicUrl).hostname}`,
    // Every page, dynamic or static, is served by every replica.
    directory: { formatVersion: 1, logicalOrigin, entries: ['/', '/recipes/*', '/static/*', '/api/*'].map((logical) => ({ logical, servers })) },
  },
});

await app.listen({ host: '127.0.0.1', port });
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.on(signal, () => {
    app.close().then(() => process.exit(0), () => process.exit(1));
  });
}
