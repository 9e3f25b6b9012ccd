import { spawn } from 'node:child_process';
import autocannon from 'autocannon';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { benchPage } from '../bench/page.ts';
const root = await mkdtemp(join(tmpdir(), 'x-'));
await writeFile(join(root, 'index.html'), benchPage(50*1024));
const modes = ['static', 'hook', 'nodir', 'noinject'];
const ports: Record<string, number> = {}; const kids: any[] = [];
for (const m of modes) { const c = spawn(process.execPath, ['--import', 'tsx', new URL('./srv.mts', import.meta.url).pathname, m, root], { stdio: ['ignore', 'pipe', 'inherit'] }); kids.push(c);
  ports[m] = await new Promise((res) => { let o=''; c.stdout!.on('data', (d) => { o += d; const x = /READY (\d+)/.exec(o); if (x) res(Number(x[1])); }); }); }
for (let r = 0; r < 3; r++) for (const m of (r % 2 ? [...modes].reverse() : modes)) { const res = await autocannon({ url: `http://127.0.0.1:${ports[m]}/index.html`, connections: 10, duration: 3 }); console.log(r, m, res.requests.average); }
for (const k of kids) k.kill('SIGTERM');
