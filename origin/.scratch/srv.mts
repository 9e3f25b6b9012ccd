import Fastify from 'fastify';
import fastifyStatic from '@fastify/static';
import { webppOrigin } from '../src/plugin.ts';
import { benchDirectory } from '../bench/page.ts';
const [mode, root] = process.argv.slice(2);
const app = Fastify();
app.get('/__cpu', async () => process.cpuUsage());
if (mode === 'hook') { app.addHook('onRequest', async () => {}); app.addHook('onSend', async (_q, _r, p) => p); app.addHook('onResponse', async () => {}); }
if (mode === 'noinject') await app.register(webppOrigin, { publicUrl: 'http://a.localhost:1', directory: benchDirectory, injectScript: false });
if (mode === 'nodir') await app.register(webppOrigin, { publicUrl: 'http://a.localhost:1', injectScript: false });
await app.register(fastifyStatic, { root, index: ['index.html'], redirect: true });
await app.listen({ port: 0, host: '127.0.0.1' });
console.log('READY', (app.server.address() as any).port);
