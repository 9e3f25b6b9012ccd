/**
 * One logical URL, one content (issue 25 §10), on three real servers on loopback: POSTs of
 * different bodies to the same path on a, b and c, and a mix of concurrent POSTs and PUTs,
 * leave every replica serving the same bytes once the peers have synced — those of the
 * greatest version, as for a PUT (docs/origin.md, "Convergence"). Before, each server kept
 * serving the body it had been POSTed, and the worker bound the one URL to replicas that
 * served different content.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startReplicaServer, type ReplicaServer } from '../src/server.js';
import { auth, removeTempDirs, tempDir, TRIO, type TrioName, trioAddresses, trioMember, waitFor } from './helpers.js';

let ports: Record<TrioName, number>;
const servers: ReplicaServer[] = [];

beforeAll(async () => {
  let urls: Record<TrioName, string>;
  ({ ports, urls } = await trioAddresses());
  for (const name of TRIO) {
    servers.push(
      await startReplicaServer({
        ...trioMember(name, ports, urls),
        dataDir: await tempDir(`webpp-convergence-${name}-`),
        injectScript: false,
        syncIntervalMs: 200,
        peerTimeoutMs: 2000,
        peerPingIntervalMs: 60_000,
      }),
    );
  }
}, 30_000);

afterAll(async () => {
  await Promise.all(servers.map((server) => server.close()));
  await removeTempDirs();
});

const local = (name: TrioName, path: string): string => `http://127.0.0.1:${ports[name]}${path}`;

function write(method: 'POST' | 'PUT', name: TrioName, path: string, body: string): Promise<number> {
  return fetch(local(name, `/.well-known/webpp/replicas${path}`), { method, headers: { ...auth, 'content-type': 'text/plain' }, body }).then(async (response) => {
    await response.arrayBuffer();
    return response.status;
  });
}

/** What each server serves at `path`. */
async function servedBy(path: string): Promise<Record<TrioName, string>> {
  const bodies = {} as Record<TrioName, string>;
  for (const name of TRIO) {
    const response = await fetch(local(name, path));
    bodies[name] = `${response.status} ${await response.text()}`;
  }
  return bodies;
}

/** Waits (bounded) until the three serve one 200 body at `path`; returns it. */
function converged(path: string): Promise<string> {
  return waitFor(`one content at ${path} on a, b and c`, async () => {
    const bodies = Object.values(await servedBy(path));
    return bodies.every((body) => body === bodies[0] && body.startsWith('200 ')) ? bodies[0] : undefined;
  }, { timeoutMs: 20_000, intervalMs: 100 });
}

/** The version each server stores at `path`. */
async function versionsOf(path: string): Promise<string[]> {
  return Promise.all(TRIO.map(async (name) => {
    const info = (await (await fetch(local(name, `/.well-known/webpp/replicas${path}`), { headers: auth })).json()) as { stored: { version: string } | null };
    return info.stored?.version ?? 'none';
  }));
}

describe('the replicas of one logical URL converge', () => {
  it('after POSTs of different bodies to a, b and c (the issue\'s reproduction)', async () => {
    expect(await Promise.all(TRIO.map((name) => write('POST', name, '/x', `posted on ${name}`)))).toEqual([201, 201, 201]);
    const body = await converged('/x');
    expect(['200 posted on a', '200 posted on b', '200 posted on c']).toContain(body);
    // Every holder stores the same version: the greatest of the three.
    const versions = await versionsOf('/x');
    expect(new Set(versions).size).toBe(1);
  });

  it('after a mix of concurrent POSTs and PUTs', async () => {
    const statuses = await Promise.all([
      write('POST', 'a', '/mix', 'post a'),
      write('POST', 'b', '/mix', 'post b'),
      write('PUT', 'c', '/x', 'put c'),
      write('POST', 'c', '/mix', 'post c'),
      write('PUT', 'a', '/x', 'put a'),
      write('PUT', 'b', '/x', 'put b'),
    ]);
    expect(statuses).toEqual([201, 201, 200, 201, 200, 200]);
    expect(['200 post a', '200 post b', '200 post c']).toContain(await converged('/mix'));
    expect(['200 put a', '200 put b', '200 put c']).toContain(await converged('/x'));
    // A later PUT anywhere wins everywhere, as before.
    expect(await write('PUT', 'b', '/mix', 'final')).toBe(200);
    expect(await converged('/mix')).toBe('200 final');
    expect(new Set(await versionsOf('/mix')).size).toBe(1);
  });
});
