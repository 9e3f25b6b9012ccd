/**
 * kill -9 at any moment must leave a directory (and replica store) that a restart restores:
 * a real child process takes a stream of replica creations and directory edits and is
 * killed with SIGKILL while writes are in flight, several times over. After every restart,
 * every change that was acknowledged before the kill is there, and the server works.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { spawn, type ChildProcess } from 'node:child_process';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ADMIN_TOKEN, auth, removeTempDirs, tempDir, waitFor } from './helpers.js';

const CHILD = fileURLToPath(new URL('./fixtures/replica-server-child.ts', import.meta.url));
const children = new Set<ChildProcess>();
/** Fixed across restarts (the port is not), so logical URLs stay the same. */
const PUBLIC_URL = 'http://crash.localhost:9999';

afterAll(async () => {
  for (const child of children) child.kill('SIGKILL');
  await removeTempDirs();
});

async function spawnServer(dataDir: string): Promise<{ child: ChildProcess; port: number; exited: Promise<void> }> {
  const child = spawn(process.execPath, ['--import', 'tsx', CHILD, JSON.stringify({ dataDir, adminToken: ADMIN_TOKEN, injectScript: false, publicUrl: PUBLIC_URL })], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.add(child);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const port = await new Promise<number>((resolve, reject) => {
    let stdout = '';
    child.stdout?.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
      const match = /READY (\d+)/.exec(stdout);
      if (match !== null) resolve(Number(match[1]));
    });
    child.once('exit', (code) => reject(new Error(`child exited with ${code} before READY: ${stderr}`)));
    setTimeout(() => reject(new Error(`child not ready after 20 s: ${stderr}`)), 20_000).unref();
  });
  return { child, port, exited };
}

describe('crash safety', () => {
  it('restores an intact directory and every acknowledged replica after SIGKILL during writes', async () => {
    const dataDir = await tempDir('webpp-crash-');
    const acknowledged = new Map<string, string>(); // path -> content
    const acknowledgedEntries: string[] = [];
    const cycles = 4;
    for (let cycle = 0; cycle < cycles; cycle += 1) {
      const { child, port, exited } = await spawnServer(dataDir);
      const base = `http://127.0.0.1:${port}`;

      // Everything acknowledged before is back.
      const listing = (await (await fetch(`${base}/.well-known/webpp/directory`)).json()) as { entries: { logical: string; physical: string[] }[] };
      const logicals = new Set(listing.entries.map((entry) => entry.logical));
      for (const logical of acknowledgedEntries) expect(logicals.has(logical)).toBe(true);
      for (const [path, content] of acknowledged) {
        const response = await fetch(`${base}${path}`);
        expect({ path, status: response.status, body: await response.text() }).toEqual({ path, status: 200, body: content });
        expect(logicals.has(`${PUBLIC_URL}${path}`)).toBe(true);
      }

      // A large directory makes each persisted write long, so the kill lands inside writes.
      const bulk = Array.from({ length: 1500 }, (_, i) => ({ logical: `/bulk/c${cycle}/e${i}.png`, physical: [`http://mirror${i % 7}.localhost:9000/c${cycle}/e${i}.png`] }));
      const bulkResponse = await fetch(`${base}/.well-known/webpp/directory`, { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: JSON.stringify({ add: bulk }) });
      expect(bulkResponse.status).toBe(200);
      acknowledgedEntries.push(`${PUBLIC_URL}/bulk/c${cycle}/e0.png`, `${PUBLIC_URL}/bulk/c${cycle}/e1499.png`);

      // A stream of creations and edits, killed while requests are in flight.
      let stop = false;
      let sent = 0;
      const writer = async (lane: number): Promise<void> => {
        for (let i = 0; !stop && i < 400; i += 1) {
          const path = `/c${cycle}/l${lane}/r${i}.txt`;
          const content = `cycle ${cycle} lane ${lane} item ${i} ${'#'.repeat(i % 50)}`;
          sent += 1;
          try {
            const response = await fetch(`${base}/.well-known/webpp/replicas${path}`, { method: 'POST', headers: auth, body: content });
            if (response.status === 201) acknowledged.set(path, content);
            await response.arrayBuffer();
            const edit = await fetch(`${base}/.well-known/webpp/directory`, {
              method: 'POST',
              headers: { ...auth, 'content-type': 'application/json' },
              body: JSON.stringify({ add: [{ logical: `/edits/c${cycle}/l${lane}/${i}`, servers: ['http://m.localhost:9'] }] }),
            });
            if (edit.status === 200) acknowledgedEntries.push(`${PUBLIC_URL}/edits/c${cycle}/l${lane}/${i}`);
            await edit.arrayBuffer();
          } catch {
            return; // the server is gone
          }
        }
      };
      const lanes = [0, 1, 2].map(writer);
      // Kill after a number of acknowledged writes that varies per cycle.
      const target = acknowledged.size + 10 + cycle * 7;
      await waitFor('some acknowledged writes', () => acknowledged.size >= target, { timeoutMs: 30_000, intervalMs: 5 });
      child.kill('SIGKILL');
      await exited;
      stop = true;
      await Promise.all(lanes);
      expect(sent).toBeGreaterThan(0);
      children.delete(child);
    }

    // Final restart: intact, usable, and no temporary files left behind.
    const { child, port } = await spawnServer(dataDir);
    const base = `http://127.0.0.1:${port}`;
    for (const [path, content] of acknowledged) expect(await (await fetch(`${base}${path}`)).text()).toBe(content);
    const created = await fetch(`${base}/.well-known/webpp/replicas/after.txt`, { method: 'POST', headers: auth, body: 'after' });
    expect(created.status).toBe(201);
    expect((await readdir(dataDir)).filter((name) => name.includes('webpp-tmp'))).toEqual([]);
    expect((await readdir(join(dataDir, 'replicas', 'meta'))).filter((name) => name.includes('webpp-tmp'))).toEqual([]);
    child.kill('SIGTERM');
  }, 180_000);
});
