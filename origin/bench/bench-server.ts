/**
 * A server for the pre-processing benchmark, in its own process so that the load
 * generator does not share its event loop. argv: <mode> <root> where mode is
 * "static" (plain @fastify/static: the disk baseline), "memory" (plain Fastify answering the
 * page from a Buffer read once, with @fastify/static's headers: the in-memory baseline),
 * "webpp" (plugin defaults: bindings + script injection,
 * cache on), "webpp-noinject" (bindings header only, body streamed from disk as by
 * @fastify/static) or "webpp-nocache" (defaults with the cache disabled).
 * Prints "READY <port>". GET /__cpu returns process.cpuUsage().
 */
import { readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import Fastify, { type FastifyInstance } from 'fastify';
import fastifyStatic from '@fastify/static';
import { startReplicaServer } from '../src/server.js';
import { benchDirectory } from './page.js';

const [mode = 'static', root = '.'] = process.argv.slice(2);
let port: number;
let close: () => Promise<void>;
/** CPU time this process has used, so the benchmark can report CPU time per request. */
const cpuRoute = (app: FastifyInstance): void => {
  app.get('/__cpu', async () => process.cpuUsage());
};
if (mode === 'static') {
  const app = Fastify({ logger: false });
  cpuRoute(app);
  await app.register(fastifyStatic, { root, index: ['index.html'], redirect: true });
  await app.listen({ port: 0, host: '127.0.0.1' });
  port = (app.server.address() as { port: number }).port;
  close = () => app.close();
} else if (mode === 'memory') {
  const app = Fastify({ logger: false });
  cpuRoute(app);
  const file = join(root, 'index.html');
  const [body, info] = await Promise.all([readFile(file), stat(file)]);
  // The validators @fastify/send derives from the file (weak ETag of size and mtime).
  const etag = `W/"${info.size.toString(16)}-${info.mtime.getTime().toString(16)}"`;
  const lastModified = info.mtime.toUTCString();
  app.get('/index.html', (_request, reply) => {
    reply
      .header('accept-ranges', 'bytes')
      .header('cache-control', 'public, max-age=0')
      .header('last-modified', lastModified)
      .header('etag', etag)
      .header('content-type', 'text/html; charset=utf-8')
      .send(body);
  });
  await app.listen({ port: 0, host: '127.0.0.1' });
  port = (app.server.address() as { port: number }).port;
  close = () => app.close();
} else {
  const server = await startReplicaServer({
    root,
    routes: cpuRoute,
    publicHost: 'a.localhost',
    directory: benchDirectory,
    preprocessCacheBytes: mode === 'webpp-nocache' ? 0 : 32 * 1024 * 1024,
    injectScript: mode !== 'webpp-noinject',
  });
  port = server.port;
  close = () => server.close();
}
process.stdout.write(`READY ${port}\n`);
process.on('SIGTERM', () => void close().then(() => process.exit(0)));
