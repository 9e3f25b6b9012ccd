/**
 * Issue 23's traps for a first-time operator: a server started as the README says (no
 * --logical-origin, the shared directory file) registers replicas under the site's logical
 * URLs; a disagreement stops the start naming both; start-up errors are one line, name the
 * mistyped property, and say once what to do about a taken port; a build usage error exits 2.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { createServer, type Server } from 'node:net';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { HELP } from '../src/cli.js';
import { FLAGS } from '../src/options/cli-flags.js';
import { startReplicaServer, type ReplicaServer } from '../src/server.js';
import { ADMIN_TOKEN, CLUSTER_SECRET, auth, bindingMap, freePort, removeTempDirs, tempDir, waitFor } from './helpers.js';

const CLI = fileURLToPath(new URL('../src/cli.ts', import.meta.url));
const servers: ReplicaServer[] = [];
afterAll(async () => {
  await Promise.all(servers.map((server) => server.close()));
  await removeTempDirs();
});

function runCli(args: string[]) {
  return spawnSync(process.execPath, ['--import', 'tsx', CLI, ...args], { encoding: 'utf8', env: { ...process.env, WEBPP_ADMIN_TOKEN: ADMIN_TOKEN }, timeout: 30_000 });
}

async function site(): Promise<string> {
  const root = await tempDir();
  await mkdir(join(root, 'guide'));
  await writeFile(join(root, 'guide', 'install.html'), '<html><head></head><body><img src="/img/a.png"></body></html>');
  return root;
}

describe('the logical origin of a server started without --logical-origin', () => {
  it("comes from the directory file: a replica POSTed to b is registered under a's logical URL and a resolves it", async () => {
    const [portA, portB] = [await freePort(), await freePort()];
    const [urlA, urlB] = [`http://a.localhost:${portA}`, `http://b.localhost:${portB}`];
    const directoryFile = join(await tempDir(), 'd.json');
    await writeFile(directoryFile, JSON.stringify({ formatVersion: 1, logicalOrigin: urlA, entries: [{ logical: '/img/*', servers: [urlA] }] }));
    const common = { adminToken: ADMIN_TOKEN, clusterSecret: CLUSTER_SECRET, directoryFile, injectScript: false, syncIntervalMs: 200 };
    // As the README's "A folder of files" command: --directory and --peer, no --logical-origin.
    servers.push(await startReplicaServer({ ...common, root: await site(), port: portA, publicUrl: urlA, peers: [urlB], dataDir: await tempDir() }));
    servers.push(await startReplicaServer({ ...common, root: await site(), port: portB, publicUrl: urlB, peers: [urlA], dataDir: await tempDir() }));
    const created = await fetch(`http://127.0.0.1:${portB}/.well-known/webpp/replicas/guide/install.html`, {
      method: 'POST',
      headers: { ...auth, 'content-type': 'text/html' },
      body: '<html><body><img src="/img/a.png"></body></html>',
    });
    expect(created.status).toBe(201);
    expect(JSON.stringify(await created.json())).toContain(`${urlA}/guide/install.html`);
    const resolved = await waitFor('a to resolve the logical URL to b', async () => {
      const answer = (await (await fetch(`http://127.0.0.1:${portA}/.well-known/webpp/resolve?url=${encodeURIComponent(`${urlA}/guide/install.html`)}`)).json()) as { replicated: boolean; physicalUrls: string[] };
      return answer.replicated && answer.physicalUrls.includes(`${urlB}/guide/install.html`) ? answer : undefined;
    });
    expect(resolved.replicated).toBe(true);
    const health = (await (await fetch(`http://127.0.0.1:${portB}/.well-known/webpp/health`)).json()) as { logicalOrigin: string };
    expect(health.logicalOrigin).toBe(urlA);
    // b's pages carry bindings for the site's logical URLs.
    const page = await fetch(`http://127.0.0.1:${portB}/guide/install.html`);
    expect(Object.keys(bindingMap(page.headers.get('webpp-bindings') ?? undefined))).toContain(`${urlA}/img/*`);
  }, 60_000);

  it('stops the start when --logical-origin and the directory file disagree, naming both', async () => {
    const directoryFile = join(await tempDir(), 'd.json');
    await writeFile(directoryFile, JSON.stringify({ formatVersion: 1, logicalOrigin: 'http://a.localhost:8720', entries: [] }));
    const result = runCli([await site(), '--port', '0', '--directory', directoryFile, '--logical-origin', 'http://b.localhost:8721', '--data-dir', await tempDir()]);
    expect(result.status).toBe(1);
    expect(result.stderr).toContain('http://a.localhost:8720');
    expect(result.stderr).toContain('http://b.localhost:8721');
    expect(result.stderr).toContain(directoryFile);
    expect(result.stdout).not.toContain('webpp-origin listening');
  }, 40_000);
});

describe('start-up errors an operator reads', () => {
  it('a directory file that is not JSON is reported on one line', async () => {
    const file = join(await tempDir(), 'bad.json');
    await writeFile(file, '{"formatVersion": 1,\n "entries": [ x ]\n}\n');
    const result = runCli([await site(), '--port', '0', '--directory', file, '--data-dir', await tempDir()]);
    expect(result.status).toBe(1);
    const lines = result.stderr.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/WEBPP_ERR_DIRECTORY_FILE.*not JSON/);
  }, 40_000);

  it('a "server" for "servers" typo names the property and the one it resembles', async () => {
    const file = join(await tempDir(), 'typo.json');
    await writeFile(file, JSON.stringify({ formatVersion: 1, entries: [{ logical: '/img/*', server: ['http://b.localhost:8082'] }] }));
    const result = runCli([await site(), '--port', '0', '--directory', file, '--data-dir', await tempDir()]);
    expect(result.status).toBe(1);
    expect(result.stderr).toContain('/entries/0 has an unknown property "server" (did you mean "servers"?)');
    expect(result.stderr).not.toMatch(/anyOf/);
  }, 40_000);

  it('a port in use is reported once, with what to do', async () => {
    const holder: Server = createServer();
    const port = await new Promise<number>((resolve) => holder.listen(0, '127.0.0.1', () => resolve((holder.address() as { port: number }).port)));
    try {
      const result = runCli([await site(), '--port', String(port), '--data-dir', await tempDir()]);
      expect(result.status).toBe(1);
      expect(result.stderr.match(/EADDRINUSE/g)).toHaveLength(1);
      expect(result.stderr).toContain(`127.0.0.1:${port} is already in use`);
      expect(result.stderr).toContain('--port');
    } finally {
      holder.close();
    }
  }, 40_000);

  it('webpp-origin build with --out inside the input folder is a usage error: exit 2', async () => {
    const root = await site();
    const directoryFile = join(await tempDir(), 'd.json');
    await writeFile(directoryFile, JSON.stringify({ formatVersion: 1, logicalOrigin: 'https://example.org', entries: [] }));
    const result = runCli(['build', root, '--out', join(root, 'dist'), '--directory', directoryFile]);
    expect(result.status).toBe(2);
    expect(result.stderr).toContain('must not be inside the input folder');
  }, 40_000);
});

describe('webpp-origin build and pages without a replica', () => {
  it('warns, naming them, when pages are not replicated; says nothing once they are', async () => {
    const root = await site();
    const directoryFile = join(await tempDir(), 'd.json');
    const origin = 'https://example.github.io';
    const mirror = 'https://mirror.example.net';
    await writeFile(directoryFile, JSON.stringify({ formatVersion: 1, logicalOrigin: origin, entries: [{ logical: '/img/*', servers: [origin, mirror] }] }));
    const imagesOnly = runCli(['build', root, '--out', join(await tempDir(), 'dist'), '--directory', directoryFile]);
    expect(imagesOnly.status).toBe(0);
    expect(imagesOnly.stderr).toContain('warning: 1 of 1 pages have no replica on another host (/guide/install.html)');
    await writeFile(directoryFile, JSON.stringify({ formatVersion: 1, logicalOrigin: origin, entries: [{ logical: '/*', servers: [origin, mirror] }] }));
    const everything = runCli(['build', root, '--out', join(await tempDir(), 'dist'), '--directory', directoryFile]);
    expect(everything.status).toBe(0);
    expect(everything.stderr).toBe('');
  }, 60_000);
});

describe('webpp-origin --help', () => {
  const lines = HELP.split('\n');
  const lineOf = (text: string): number => lines.findIndex((line) => line.includes(text));
  /** The line of a flag's own entry (not a mention in the example or another entry). */
  const entryOf = (flag: string): number => lines.findIndex((line) => new RegExp(`^  (\\[\\w+\\], )?${flag}( |$)`).test(line));

  it('starts with an example and the essentials, the credentials right after them', () => {
    expect(lineOf('Example:')).toBeGreaterThan(0);
    expect(lineOf('Example:')).toBeLessThan(15);
    expect(lineOf('Essentials')).toBeLessThan(lineOf('Credentials'));
    for (const flag of ['--root', '--port', '--public-host', '--directory', '--data-dir', '--peer', '--logical-origin']) {
      expect(entryOf(flag)).toBeGreaterThan(lineOf('Essentials'));
      expect(entryOf(flag)).toBeLessThan(lineOf('Credentials'));
    }
    // Before: the credentials came after 60 lines of automatic replication tuning.
    expect(entryOf('--admin-token')).toBeLessThan(60);
    expect(entryOf('--admin-token')).toBeLessThan(entryOf('--auto-replicate'));
  });

  it('lists every flag once, in a section per feature', () => {
    for (const spec of FLAGS) expect(lines.filter((line) => new RegExp(`^  (\\[\\w+\\], )?--${spec.flag}( |$)`).test(line))).toHaveLength(1);
    for (const heading of ['HTTPS and HTTP/2', 'Automatic replication', 'Memory cache', 'Batch transmission', 'Checking a deployment', 'Static hosting']) {
      expect(lines.some((line) => line.startsWith(heading))).toBe(true);
    }
    expect(entryOf('--memory-cache-bytes')).toBeGreaterThan(lineOf('Memory cache'));
    expect(entryOf('--auto-replicate')).toBeGreaterThan(lineOf('Automatic replication'));
  });
});
