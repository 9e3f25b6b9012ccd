/**
 * Issue 10 §1: a request that reaches webpp-origin while it starts must not kill it.
 *
 * The CLI is started as the README shows, in a child process, and from its first
 * millisecond it gets a stream of health checks, page requests and signed peer-sync
 * messages. Every answer must be either a 503 with Retry-After (still starting) or a real
 * answer, the process must stay up, and once started it must serve. A second test starts
 * a server whose peer is busy pushing to it: the newcomer comes up and catches up.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import * as Y from 'yjs';
import * as syncProtocol from 'y-protocols/sync';
import * as encoding from 'lib0/encoding';
import { startReplicaServer, type ReplicaServer } from '../src/server.js';
import { clusterRequest } from '../src/sync/cluster-client.js';
import { SYNC_PATH } from '../src/sync/peer-sync.js';
import { ADMIN_TOKEN, CLUSTER_SECRET, auth, freePort, removeTempDirs, tempDir, waitFor } from './helpers.js';

const CLI = fileURLToPath(new URL('../src/cli.ts', import.meta.url));
const SITE = fileURLToPath(new URL('../../examples/static-site/site', import.meta.url));
const children = new Set<ChildProcess>();
const servers: ReplicaServer[] = [];

afterAll(async () => {
  for (const child of children) child.kill('SIGKILL');
  await Promise.all(servers.map((server) => server.close()));
  await removeTempDirs();
});

function startCli(args: string[]): { child: ChildProcess; exit: Promise<number | null>; output: () => string } {
  const child = spawn(process.execPath, ['--import', 'tsx', CLI, ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, WEBPP_ADMIN_TOKEN: ADMIN_TOKEN, WEBPP_CLUSTER_SECRET: CLUSTER_SECRET },
  });
  children.add(child);
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exit = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { child, exit, output: () => output };
}

function syncHello(): Uint8Array {
  const doc = new Y.Doc();
  doc.getMap('probe').set('x', 1);
  const encoder = encoding.createEncoder();
  syncProtocol.writeSyncStep1(encoder, doc);
  return encoding.toUint8Array(encoder);
}

interface Answer {
  status: number;
  retryAfter: string | null;
}

/** One request of the stream; a refused connection (not listening yet) is status 0. */
async function hit(base: string, index: number): Promise<Answer> {
  try {
    if (index % 3 === 2) {
      // Peers address the server by its public URL (the signature covers that origin).
      const publicBase = base.replace('//127.0.0.1:', '//a.localhost:');
      const response = await clusterRequest(CLUSTER_SECRET, `${publicBase}${SYNC_PATH}`, { method: 'POST', body: syncHello(), timeoutMs: 5_000 });
      const retryAfter = response.headers['retry-after'];
      return { status: response.status, retryAfter: typeof retryAfter === 'string' ? retryAfter : null };
    }
    const path = index % 3 === 0 ? '/.well-known/webpp/health' : '/index.html';
    const response = await fetch(`${base}${path}`, { signal: AbortSignal.timeout(5_000) });
    await response.arrayBuffer();
    return { status: response.status, retryAfter: response.headers.get('retry-after') };
  } catch {
    return { status: 0, retryAfter: null };
  }
}

describe('start-up under a stream of requests', () => {
  it('answers 503 + Retry-After while starting, never dies, then serves (5 starts)', async () => {
    const starts = 5;
    let startingAnswers = 0;
    for (let start = 0; start < starts; start += 1) {
      const port = await freePort();
      const base = `http://127.0.0.1:${port}`;
      const server = startCli([SITE, '--port', String(port), '--public-host', 'a.localhost', '--data-dir', await tempDir(), '--peer', 'http://b.localhost:1', '--log-level', 'warn']);
      let exited = false;
      void server.exit.then(() => (exited = true));
      const answers: Answer[] = [];
      const deadlineMs = Date.now() + 30_000;
      // Four requests in flight at a time, from before the socket exists until 40 real answers came back.
      let served = 0;
      let index = 0;
      while (served < 40 && Date.now() < deadlineMs && !exited) {
        const batch = await Promise.all([0, 1, 2, 3].map(() => hit(base, (index += 1))));
        answers.push(...batch);
        served += batch.filter((answer) => answer.status === 200).length;
        if (batch.every((answer) => answer.status === 0)) await new Promise((resolve) => setTimeout(resolve, 5));
      }
      expect(exited, `the server died during start ${start + 1}:\n${server.output()}`).toBe(false);
      expect(served).toBeGreaterThanOrEqual(40);
      for (const answer of answers) {
        expect([0, 200, 503]).toContain(answer.status);
        if (answer.status === 503) expect(answer.retryAfter).toBe('1');
      }
      startingAnswers += answers.filter((answer) => answer.status === 503).length;
      expect(server.output()).not.toContain('TypeError');
      server.child.kill('SIGTERM');
      expect(await server.exit).toBe(0);
    }
    // The stream did reach the servers in their start-up window (otherwise this test proves nothing).
    expect(startingAnswers).toBeGreaterThan(0);
  }, 120_000);

  it('a server started while its peer pushes directory changes comes up and catches up', async () => {
    const portA = await freePort();
    const urlA = `http://a.localhost:${portA}`;
    // b runs first, with a short sync period, and keeps changing its directory.
    const b = await startReplicaServer({
      publicHost: 'b.localhost',
      dataDir: await tempDir(),
      adminToken: ADMIN_TOKEN,
      clusterSecret: CLUSTER_SECRET,
      peers: [urlA],
      syncIntervalMs: 500,
      injectScript: false,
    });
    servers.push(b);
    const a = startCli([SITE, '--port', String(portA), '--public-host', 'a.localhost', '--data-dir', await tempDir(), '--peer', b.url, '--sync-interval-ms', '500', '--log-level', 'warn']);
    let exited = false;
    void a.exit.then(() => (exited = true));
    // Replica creations on b while a starts: each is pushed to a at once.
    for (let n = 0; n < 20; n += 1) {
      const response = await fetch(`http://127.0.0.1:${b.port}/.well-known/webpp/replicas/pushed/${n}.txt`, {
        method: 'POST',
        headers: { ...auth, 'content-type': 'text/plain' },
        body: `replica ${n}`,
      });
      expect(response.status).toBe(201);
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    // a comes up and ends with every entry b made.
    const listing = await waitFor('a to list every entry b made', async () => {
      if (exited) throw new Error(`a died:\n${a.output()}`);
      const response = await fetch(`http://127.0.0.1:${portA}/.well-known/webpp/directory`).catch(() => undefined);
      if (response?.status !== 200) return undefined;
      const body = (await response.json()) as { entries: { logical: string }[] };
      const pushed = body.entries.filter((entry) => entry.logical.includes('/pushed/'));
      return pushed.length === 20 ? pushed : undefined;
    }, { timeoutMs: 20_000 });
    expect(listing).toHaveLength(20);
    expect(exited).toBe(false);
    a.child.kill('SIGTERM');
    expect(await a.exit).toBe(0);
  }, 60_000);
});
