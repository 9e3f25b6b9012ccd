import Fastify from 'fastify';
import fastifyStatic from '@fastify/static';
import { webppOrigin } from '../src/plugin.ts';
import { benchDirectory, benchPage } from '../bench/page.ts';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
const root = await mkdtemp(join(tmpdir(), 'x-'));
await writeFile(join(root, 'index.html'), benchPage(50*1024));
async function make(mode: string) {
  const app = Fastify();
  if (mode !== 'static') await app.register(webppOrigin, { publicUrl: 'http://a.localhost:1', directory: benchDirectory, injectScript: mode === 'inject' });
  await app.register(fastifyStatic, { root, index: ['index.html'], redirect: true });
  await app.ready();
  return app;
}
const apps = { static: await make('static'), noinject: await make('noinject'), inject: await make('inject') };
for (let round = 0; round < 4; round++) for (const [name, app] of Object.entries(apps)) {
  const n = 2000; const c0 = process.cpuUsage();
  await Promise.all(Array.from({length: 10}, async () => { for (let i = 0; i < n/10; i++) { const r = await app.inject('/index.html'); if (r.statusCode !== 200) throw new Error('x'); } }));
  const c = process.cpuUsage(c0);
  console.log(round, name.padEnd(9), ((c.user + c.system) / n).toFixed(0), 'µs CPU/request');
}
