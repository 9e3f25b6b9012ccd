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
const cpu = async (p: number) => { const u = await (await fetch(`http://127.0.0.1:${p}/__cpu`)).json(); return u.user + u.system; };
for (let r = 0; r < 4; r++) for (const m of (r % 2 ? [...modes].reverse() : modes)) { const c0 = await cpu(ports[m]); const res = await autocannon({ url: `http://127.0.0.1:${ports[m]}/index.html`, connections: 10, amount: 5000 }); const c1 = await cpu(ports[m]); console.log(r, m.padEnd(9), res.requests.average, ((c1 - c0) / res.requests.total).toFixed(0), 'us/req'); }
for (const k of kids) k.kill('SIGTERM');
