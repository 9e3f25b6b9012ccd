import { startReplicaServer } from '../src/server.ts';
import { benchDirectory, benchPage } from '../bench/page.ts';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
const root = await mkdtemp(join(tmpdir(), 'x-'));
await writeFile(join(root, 'index.html'), benchPage(50*1024));
for (const injectScript of [false, true]) {
const s = await startReplicaServer({ root, directory: benchDirectory, injectScript });
const r = await autocannon({ url: `http://127.0.0.1:${s.port}/index.html`, connections: 10, duration: 2 });
console.log('inject', injectScript, r.requests.average, 'hits', s.app.webpp.cache.hits, 'misses', s.app.webpp.cache.misses, 'size', s.app.webpp.cache.size);
await s.close();
}
