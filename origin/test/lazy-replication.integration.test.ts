/**
 * Lazy replication (issue 14) with three real servers on loopback: a home `a` whose content
 * root holds the site, and two co-ops `b`, `c` with empty content roots. An automatic
 * replica placed on a co-op (a directory pair with the placement marker, as the decisions
 * add it) is fetched from a holder on the co-op's first request for it, streamed through
 * (concurrent first requests share one upstream fetch, no 404 meanwhile), stored,
 * revalidated every T_validate, superseded by a PUT, and dropped when withdrawn. A holder
 * that dies mid-body (a plain HTTP server that sends half the bytes, then its socket dies)
 * is replaced by the next holder from the byte where it stopped; no holder at all is a 502.
 */
import { createHash } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import { mkdir, utimes, writeFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startReplicaServer, type ReplicaServer } from '../src/server.js';
import type { AutomaticPlacement } from '../src/directory/automatic-placement.js';
import { ADMIN_TOKEN, CLUSTER_SECRET, auth, freePort, removeTempDirs, tempDir, waitFor } from './helpers.js';

const NAMES = ['a', 'b', 'c'] as const;
type Name = (typeof NAMES)[number];
const urls = {} as Record<Name, string>;
const servers = {} as Record<Name, ReplicaServer>;
let homeRoot: string;
const BIG = Buffer.alloc(3 * 1024 * 1024);
for (let i = 0; i < BIG.length; i += 1) BIG[i] = (i * 31 + (i >> 10)) & 0xff;

function placement(home: string): AutomaticPlacement {
  return { home, placedAtMs: Date.now(), reason: 'test', sizeBytes: 0 };
}

/** Places `path` (held by a) on `coop` the way the decisions do, and waits until the co-op's directory has it. */
async function place(path: string, coop: Name, home = urls.a, alsoListed: string[] = []): Promise<void> {
  const directory = servers.a.app.webpp.directory;
  const logical = urls.a + path;
  directory.addReplica(logical, urls.a + path, 'local', placement(urls.a));
  for (const other of alsoListed) directory.addReplica(logical, other + path, 'local', placement(home));
  directory.addReplica(logical, urls[coop] + path, 'local', placement(home));
  await waitFor('placement reaches the co-op', () => servers[coop].app.webpp.directory.placement(logical, urls[coop] + path) !== undefined, { timeoutMs: 5000 });
}

async function get(name: Name, path: string, headers: Record<string, string> = {}): Promise<{ status: number; body: Buffer; headers: Headers }> {
  const response = await fetch(urls[name].replace(/\/\/\w\.localhost/, '//127.0.0.1') + path, { headers });
  return { status: response.status, body: Buffer.from(await response.arrayBuffer()), headers: response.headers };
}

beforeAll(async () => {
  homeRoot = await tempDir('webpp-lazy-home-');
  await mkdir(`${homeRoot}/img`);
  await writeFile(`${homeRoot}/img/big.bin`, BIG);
  await writeFile(`${homeRoot}/img/resume.bin`, BIG);
  await writeFile(`${homeRoot}/app.js`, 'console.log("v1");\n');
  await writeFile(`${homeRoot}/style.css`, 'body { color: red }\n');
  const ports = {} as Record<Name, number>;
  for (const name of NAMES) {
    ports[name] = await freePort();
    urls[name] = `http://${name}.localhost:${ports[name]}`;
  }
  for (const name of NAMES) {
    servers[name] = await startReplicaServer({
      root: name === 'a' ? homeRoot : await tempDir(`webpp-lazy-${name}-`),
      port: ports[name],
      publicUrl: urls[name],
      logicalOrigin: urls.a,
      adminToken: ADMIN_TOKEN,
      clusterSecret: CLUSTER_SECRET,
      peers: NAMES.filter((other) => other !== name).map((other) => urls[other]),
      syncIntervalMs: 100,
      peerTimeoutMs: 1500,
      injectScript: false,
      replicationValidateIntervalMs: 3_600_000, // rounds are run by hand below
    });
  }
}, 30_000);

afterAll(async () => {
  for (const name of NAMES) await servers[name]?.close();
  await removeTempDirs();
});

describe('lazy replication on a co-op', () => {
  it('fetches on the first requests, streams to all of them from one upstream fetch, then serves its stored copy', async () => {
    await place('/img/big.bin', 'b');
    expect(servers.b.app.webpp.store.get('/img/big.bin')).toBeUndefined();
    const answers = await Promise.all(Array.from({ length: 6 }, () => get('b', '/img/big.bin')));
    for (const answer of answers) {
      expect(answer.status).toBe(200);
      expect(answer.body.equals(BIG)).toBe(true);
    }
    const stats = servers.b.app.webpp.lazyReplicas!.stats();
    expect(stats.fetches).toBe(1);
    expect(stats.sharedRequests).toBe(5);
    await waitFor('copy stored', () => servers.b.app.webpp.store.get('/img/big.bin'), { timeoutMs: 5000 });
    const again = await get('b', '/img/big.bin');
    expect(again.body.equals(BIG)).toBe(true);
    expect(again.headers.get('etag')).toBe(`"sha256-${createHash('sha256').update(BIG).digest('base64url')}"`);
    expect(servers.b.app.webpp.lazyReplicas!.stats().fetches).toBe(1);
    const metrics = await (await fetch(`${urls.b.replace(/b\.localhost/, '127.0.0.1')}/.well-known/webpp/metrics`, { headers: auth })).text();
    expect(metrics).toContain('webpp_lazy_fetches_total{result="started"} 1');
    expect(metrics).toContain('webpp_lazy_shared_requests_total 5');
  });

  it('revalidates its copy every T_validate: unchanged is a 304, a file changed at home is fetched again', async () => {
    await place('/app.js', 'b');
    expect((await get('b', '/app.js')).body.toString()).toBe('console.log("v1");\n');
    await waitFor('copy stored', () => servers.b.app.webpp.store.get('/app.js'), { timeoutMs: 5000 });
    const lazy = servers.b.app.webpp.lazyReplicas!;
    await lazy.revalidateAll();
    expect(lazy.stats().revalidationUpdates).toBe(0);
    await writeFile(`${homeRoot}/app.js`, 'console.log("v2");\n');
    const later = new Date(Date.now() + 60_000);
    await utimes(`${homeRoot}/app.js`, later, later);
    expect((await get('b', '/app.js')).body.toString()).toBe('console.log("v1");\n'); // until T_validate
    await lazy.revalidateAll();
    expect(lazy.stats().revalidationUpdates).toBe(1);
    expect((await get('b', '/app.js')).body.toString()).toBe('console.log("v2");\n');
  });

  it('a PUT of a new version at the home supersedes the copy', async () => {
    await place('/style.css', 'c');
    expect((await get('c', '/style.css')).body.toString()).toBe('body { color: red }\n');
    await waitFor('copy stored', () => servers.c.app.webpp.store.get('/style.css'), { timeoutMs: 5000 });
    const put = await fetch(`${urls.a.replace(/a\.localhost/, '127.0.0.1')}/.well-known/webpp/replicas/style.css`, {
      method: 'PUT',
      headers: { ...auth, 'content-type': 'text/css' },
      body: 'body { color: blue }\n',
    });
    expect(put.status).toBe(200);
    const pushes = ((await put.json()) as { pushes: { physicalUrl: string; ok: boolean }[] }).pushes;
    expect(pushes.find((push) => push.physicalUrl === `${urls.c}/style.css`)?.ok).toBe(true);
    expect((await get('c', '/style.css')).body.toString()).toBe('body { color: blue }\n');
    expect((await get('a', '/style.css')).body.toString()).toBe('body { color: blue }\n');
  });

  it('resumes from the next holder when the first dies mid-body, and the client sees one whole body', async () => {
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    let served = 0;
    const dying: Server = createServer((request, response) => {
      served += 1;
      response.writeHead(200, {
        'content-type': 'application/octet-stream',
        'content-length': String(BIG.length),
        etag: `"sha256-${createHash('sha256').update(BIG).digest('base64url')}"`,
        'webpp-replica-version': `1000@${urls.a}`,
      });
      response.write(BIG.subarray(0, 1024 * 1024));
      void released.then(() => response.socket?.destroy());
    });
    await new Promise<void>((resolve) => dying.listen(0, '127.0.0.1', resolve));
    const dyingUrl = `http://d.localhost:${(dying.address() as { port: number }).port}`;
    try {
      await place('/img/resume.bin', 'c', dyingUrl, [dyingUrl]);
      const response = await fetch(`${urls.c.replace(/c\.localhost/, '127.0.0.1')}/img/resume.bin`);
      expect(response.status).toBe(200);
      const reader = response.body!.getReader();
      const chunks: Uint8Array[] = [];
      let received = 0;
      // Stream-through: bytes reach the client while the holder is still sending.
      while (received < 64 * 1024) {
        const { value, done } = await reader.read();
        if (done) break;
        chunks.push(value);
        received += value.byteLength;
      }
      expect(servers.c.app.webpp.store.get('/img/resume.bin')).toBeUndefined();
      release();
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        chunks.push(value);
      }
      expect(Buffer.concat(chunks).equals(BIG)).toBe(true);
      expect(served).toBe(1);
      await waitFor('fetch resumed', () => servers.c.app.webpp.lazyReplicas!.stats().resumedFetches === 1, { timeoutMs: 5000 });
    } finally {
      release();
      await new Promise((resolve) => dying.close(resolve));
    }
  });

  it('answers 502 (never 404) when no holder can give the content, and fetches once one can', async () => {
    await place('/late.js', 'b');
    const failed = await get('b', '/late.js');
    expect(failed.status).toBe(502);
    expect((JSON.parse(failed.body.toString()) as { code: string }).code).toBe('WEBPP_ERR_LAZY_FETCH_FAILED');
    await writeFile(`${homeRoot}/late.js`, 'late();\n');
    const served = await get('b', '/late.js');
    expect(served.status).toBe(200);
    expect(served.body.toString()).toBe('late();\n');
  });

  it('drops its copy when the automatic replica is withdrawn', async () => {
    expect(servers.b.app.webpp.store.get('/img/big.bin')).toBeDefined();
    servers.a.app.webpp.directory.removeReplica(`${urls.a}/img/big.bin`, `${urls.b}/img/big.bin`);
    // The store forgets the copy before the sweep that deleted it counts it: wait for both.
    await waitFor('copy dropped', () => servers.b.app.webpp.store.get('/img/big.bin') === undefined && servers.b.app.webpp.lazyReplicas!.stats().droppedCopies > 0, { timeoutMs: 5000 });
    expect(servers.b.app.webpp.lazyReplicas!.stats().droppedCopies).toBe(1);
    expect((await get('b', '/img/big.bin')).status).toBe(404);
  });
});
