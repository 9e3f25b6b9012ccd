/**
 * Inputs an operator sends the way the docs show (curl against a running server), found
 * wrong by using the product: each answer is a 4xx with a WEBPP_ERR_* code that changes
 * nothing, or the change the operator meant. Real servers on loopback, real HTTP.
 */
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { spawn, type ChildProcess } from 'node:child_process';
import { rm, writeFile } from 'node:fs/promises';
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startReplicaServer, type ReplicaServer } from '../src/server.js';
import { ADMIN_TOKEN, auth, freePort, removeTempDirs, tempDir } from './helpers.js';

const R = '/.well-known/webpp/replicas';
const CLI = fileURLToPath(new URL('../src/cli.ts', import.meta.url));
let server: ReplicaServer | undefined;
const children = new Set<ChildProcess>();
afterEach(async () => {
  await server?.close();
  server = undefined;
  for (const child of children) child.kill('SIGKILL');
  children.clear();
});
afterAll(removeTempDirs);

interface CliRun {
  child: ChildProcess;
  /** The address it listens on, or the exit code and stderr if it stopped first. */
  outcome: Promise<{ listen: string } | { exitCode: number | null; stderr: string }>;
}

/** Starts `webpp-origin <args>` as README.md shows, in a child process. */
function startCli(args: string[]): CliRun {
  const child = spawn(process.execPath, ['--import', 'tsx', CLI, ...args], {
    env: { ...process.env, WEBPP_ADMIN_TOKEN: ADMIN_TOKEN },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.add(child);
  let stdout = '';
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const outcome = new Promise<{ listen: string } | { exitCode: number | null; stderr: string }>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`neither listening nor exited: ${stdout} ${stderr}`)), 30_000);
    child.stdout?.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
      const line = stdout.split('\n').find((candidate) => candidate.includes('webpp-origin listening'));
      if (line === undefined) return;
      clearTimeout(timer);
      resolve({ listen: (JSON.parse(line) as { listen: string }).listen });
    });
    child.once('exit', (exitCode) => {
      clearTimeout(timer);
      resolve({ exitCode, stderr });
    });
  });
  return { child, outcome };
}

async function listenAddress(run: CliRun): Promise<string> {
  const outcome = await run.outcome;
  if (!('listen' in outcome)) throw new Error(`webpp-origin exited ${outcome.exitCode}: ${outcome.stderr}`);
  return `http://${outcome.listen}`;
}

async function listing(base: string): Promise<string> {
  const [directory, replicas] = await Promise.all([
    fetch(`${base}/.well-known/webpp/directory`).then(async (response) => response.text()),
    fetch(`${base}${R}`, { headers: auth }).then(async (response) => response.text()),
  ]);
  return `${directory}\n${replicas}`;
}

describe('replica paths with non-ASCII characters', () => {
  it('refuses lower-case percent escapes (what curl sends for a typed "é"): browsers ask for upper case', async () => {
    server = await startReplicaServer({ adminToken: ADMIN_TOKEN, injectScript: false });
    const before = await listing(server.url);
    // `curl -X POST …/replicas/café.txt` sends "/caf%c3%a9.txt"; Chromium requests "/caf%C3%A9.txt".
    const lower = await fetch(`${server.url}${R}/caf%c3%a9.txt`, { method: 'POST', headers: { ...auth, 'content-type': 'text/plain' }, body: 'bonjour' });
    const answer = (await lower.json()) as { code?: string; message?: string };
    expect([lower.status, answer.code]).toEqual([400, 'WEBPP_ERR_BAD_PATH']);
    expect(answer.message).toContain('/caf%C3%A9.txt');
    expect(await listing(server.url)).toBe(before);

    // The canonical form, as the error names it, is stored and served at the URL a browser asks for.
    const upper = await fetch(`${server.url}${R}/caf%C3%A9.txt`, { method: 'POST', headers: { ...auth, 'content-type': 'text/plain' }, body: 'bonjour' });
    expect(upper.status).toBe(201);
    const served = await fetch(new URL('/café.txt', server.url));
    expect([served.status, await served.text()]).toEqual([200, 'bonjour']);
  });
});

describe('serving stored replicas', () => {
  it('a suffix range longer than the replica selects all of it (RFC 9110 §14.1.1), not 416', async () => {
    server = await startReplicaServer({ adminToken: ADMIN_TOKEN, injectScript: false });
    const body = Buffer.alloc(90_000, 3);
    expect((await fetch(`${server.url}${R}/clip.bin`, { method: 'POST', headers: auth, body })).status).toBe(201);
    const whole = await fetch(`${server.url}/clip.bin`, { headers: { range: 'bytes=-100000' } });
    expect([whole.status, whole.headers.get('content-range'), (await whole.arrayBuffer()).byteLength]).toEqual([206, 'bytes 0-89999/90000', 90_000]);
    const tail = await fetch(`${server.url}/clip.bin`, { headers: { range: 'bytes=-10' } });
    expect([tail.status, tail.headers.get('content-range')]).toEqual([206, 'bytes 89990-89999/90000']);
  });

  it('a replica whose content file is gone answers 500 WEBPP_ERR_REPLICA_UNREADABLE (the worker fails over), without file paths', async () => {
    const dataDir = await tempDir();
    server = await startReplicaServer({ adminToken: ADMIN_TOKEN, injectScript: false, dataDir });
    expect((await fetch(`${server.url}${R}/notes.txt`, { method: 'POST', headers: auth, body: 'kept' })).status).toBe(201);
    // An operator cleaning the disk, a damaged volume.
    await rm(join(dataDir, 'replicas', 'blobs', createHash('sha256').update('kept').digest('hex')));
    const response = await fetch(`${server.url}/notes.txt`);
    const text = await response.text();
    expect([response.status, (JSON.parse(text) as { code?: string }).code]).toEqual([500, 'WEBPP_ERR_REPLICA_UNREADABLE']);
    expect(text).not.toContain(dataDir);
  });
});

describe('proxy mode', () => {
  it('an upstream that does not answer is 502 WEBPP_ERR_UPSTREAM_FAILED, without the upstream\'s address', async () => {
    const upstreamPort = await freePort(); // nothing listens there
    server = await startReplicaServer({ proxyUpstream: `http://127.0.0.1:${upstreamPort}`, injectScript: false });
    const response = await fetch(`${server.url}/index.html`);
    const text = await response.text();
    expect([response.status, (JSON.parse(text) as { code?: string }).code]).toEqual([502, 'WEBPP_ERR_UPSTREAM_FAILED']);
    expect(text).not.toContain(String(upstreamPort));
  });
});

describe('the name service', () => {
  it('answers a missing, empty or oversized url with 400 WEBPP_ERR_BAD_URL, readable cross-origin', async () => {
    server = await startReplicaServer({ injectScript: false });
    for (const query of ['', '?url=', `?url=/${'a'.repeat(9000)}`, '?other=1']) {
      const response = await fetch(`${server.url}/.well-known/webpp/resolve${query}`, { headers: { origin: 'http://page.localhost' } });
      const answer = (await response.json()) as { code?: string };
      expect({ query: query.slice(0, 20), status: response.status, code: answer.code, cors: response.headers.get('access-control-allow-origin') }).toEqual({
        query: query.slice(0, 20),
        status: 400,
        code: 'WEBPP_ERR_BAD_URL',
        cors: '*',
      });
    }
  });
});

describe('directory edits', () => {
  it('refuses a "servers" entry with a path instead of placing the replica at the root of that host', async () => {
    server = await startReplicaServer({ adminToken: ADMIN_TOKEN, injectScript: false });
    const before = await listing(server.url);
    const edit = async (servers: string[]): Promise<Response> =>
      fetch(`${server?.url}/.well-known/webpp/directory`, {
        method: 'POST',
        headers: { ...auth, 'content-type': 'application/json' },
        body: JSON.stringify({ add: [{ logical: '/guide/*', servers }] }),
      });
    for (const servers of [['http://mirror.localhost:9/webpp'], ['http://mirror.localhost:9/?v=1']]) {
      const response = await edit(servers);
      const answer = (await response.json()) as { code?: string; message?: string };
      expect({ servers, status: response.status, code: answer.code }).toEqual({ servers, status: 400, code: 'WEBPP_ERR_BAD_BODY' });
      expect(answer.message).toContain('"physical"');
    }
    expect(await listing(server.url)).toBe(before);
    // An origin, with or without its trailing slash, is what "servers" takes.
    expect((await edit(['http://mirror.localhost:9/'])).status).toBe(200);
    const resolved = (await (await fetch(`${server.url}/.well-known/webpp/resolve?url=/guide/a.html`)).json()) as { physicalUrls: string[] };
    expect(resolved.physicalUrls).toEqual(['http://mirror.localhost:9/guide/a.html']);
  });
});

describe('two servers started on one data folder', () => {
  it('the second stops with WEBPP_ERR_DATA_DIR_IN_USE and the first keeps its replicas; a lock left by kill -9 is taken over', async () => {
    // Several `webpp-origin` started in one folder without --data-dir all get .webpp-data.
    const [root, dataDir] = [await tempDir(), await tempDir()];
    const first = startCli([root, '--port', '0', '--data-dir', dataDir]);
    const firstUrl = await listenAddress(first);
    const created = await fetch(`${firstUrl}${R}/notes.txt`, { method: 'POST', headers: { ...auth, 'content-type': 'text/plain' }, body: 'first' });
    expect(created.status).toBe(201);

    const second = await startCli([root, '--port', '0', '--data-dir', dataDir]).outcome;
    expect(second).toMatchObject({ exitCode: 1, stderr: expect.stringContaining('WEBPP_ERR_DATA_DIR_IN_USE') as unknown });
    // Without the lock the second started, and the two overwrote each other's directory and replica metadata.
    const served = await fetch(`${firstUrl}/notes.txt`);
    expect([served.status, await served.text()]).toEqual([200, 'first']);

    first.child.kill('SIGKILL');
    await new Promise((resolve) => first.child.once('exit', resolve));
    const restarted = await listenAddress(startCli([root, '--port', '0', '--data-dir', dataDir]));
    const again = await fetch(`${restarted}/notes.txt`);
    expect([again.status, await again.text()]).toEqual([200, 'first']);
  });
});

describe('two servers in one process on one data folder', () => {
  it('the second is refused with WEBPP_ERR_DATA_DIR_IN_USE; once the first closes, the folder is free', async () => {
    const dataDir = await tempDir();
    const first = await startReplicaServer({ adminToken: ADMIN_TOKEN, injectScript: false, dataDir });
    try {
      expect((await fetch(`${first.url}${R}/notes.txt`, { method: 'POST', headers: { ...auth, 'content-type': 'text/plain' }, body: 'first' })).status).toBe(201);
      // Before: a lock of this very pid was taken for one left by a dead process, and taken over.
      await expect(startReplicaServer({ adminToken: ADMIN_TOKEN, injectScript: false, dataDir })).rejects.toMatchObject({
        code: 'WEBPP_ERR_DATA_DIR_IN_USE',
        message: expect.stringContaining('another server in this process') as unknown,
      });
      const served = await fetch(`${first.url}/notes.txt`);
      expect([served.status, await served.text()]).toEqual([200, 'first']);
    } finally {
      await first.close();
    }
    const next = await startReplicaServer({ adminToken: ADMIN_TOKEN, injectScript: false, dataDir });
    try {
      const served = await fetch(`${next.url}/notes.txt`);
      expect([served.status, await served.text()]).toEqual([200, 'first']);
    } finally {
      await next.close();
    }
  });
});

describe('a server that fails to start', () => {
  it('leaves its data folder free: the next start in the same process, once the cause is fixed, runs', async () => {
    const dataDir = await tempDir();
    await writeFile(join(dataDir, 'directory.ywebpp'), 'not a directory'); // damaged by hand
    await expect(startReplicaServer({ adminToken: ADMIN_TOKEN, injectScript: false, dataDir })).rejects.toMatchObject({ code: 'WEBPP_ERR_DIRECTORY_CORRUPT' });
    await rm(join(dataDir, 'directory.ywebpp'));
    const server = await startReplicaServer({ adminToken: ADMIN_TOKEN, injectScript: false, dataDir });
    try {
      expect((await fetch(`${server.url}/.well-known/webpp/directory`)).status).toBe(200);
    } finally {
      await server.close();
    }
  });
});

describe('stopping a server', () => {
  const sizeBytes = 16 * 1024 * 1024; // far more than the socket buffers hold

  /** `webpp-origin` serving a 16 MiB file, and a download of it that has received its first chunk. */
  async function downloading(flags: string[]): Promise<{ run: CliRun; exited: Promise<number | null>; reader: ReadableStreamDefaultReader<Uint8Array>; firstBytes: number }> {
    const [root, dataDir] = [await tempDir(), await tempDir()];
    await writeFile(join(root, 'video.bin'), Buffer.alloc(sizeBytes, 7));
    const run = startCli([root, '--port', '0', '--data-dir', dataDir, ...flags]);
    const base = await listenAddress(run);
    const exited = new Promise<number | null>((resolve) => run.child.once('exit', resolve));
    const response = await fetch(`${base}/video.bin`);
    expect(response.status).toBe(200);
    const reader = (response.body as ReadableStream<Uint8Array>).getReader();
    return { run, exited, reader, firstBytes: (await reader.read()).value?.byteLength ?? 0 };
  }

  /** Bytes read until the end of the body or an error ("terminated"). */
  async function readRest(reader: ReadableStreamDefaultReader<Uint8Array>): Promise<number> {
    let received = 0;
    try {
      for (;;) {
        const chunk = await reader.read();
        if (chunk.done) return received;
        received += chunk.value.byteLength;
      }
    } catch {
      return received;
    }
  }

  it('SIGTERM lets a download in progress finish before the process exits (status 0)', async () => {
    const { run, exited, reader, firstBytes } = await downloading([]);
    run.child.kill('SIGTERM'); // a rolling restart, mid-download
    expect(firstBytes + (await readRest(reader))).toBe(sizeBytes); // before the fix: "terminated" once the buffers ran dry
    expect(await exited).toBe(0);
  });

  it('--shutdown-drain-ms 0 cuts a download in progress at SIGTERM; a negative value is refused before the port binds', async () => {
    const refused = await startCli([await tempDir(), '--port', '0', '--data-dir', await tempDir(), '--shutdown-drain-ms=-1']).outcome;
    expect(refused).toMatchObject({ exitCode: 2, stderr: expect.stringContaining('--shutdown-drain-ms must be >= 0') as unknown }); // a usage error

    const { run, exited, reader, firstBytes } = await downloading(['--shutdown-drain-ms', '0']);
    run.child.kill('SIGTERM');
    expect(await exited).toBe(0); // without waiting for the client to read on
    expect(firstBytes + (await readRest(reader))).toBeLessThan(sizeBytes); // what the socket buffers held
  });
});
