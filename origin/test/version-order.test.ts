/**
 * Versions a server issues are unique and increasing (replicas/replica-manager.ts): a burst
 * of concurrent PUTs sent to a server that holds no replica itself (so no stored version
 * orders them) must get distinct versions, and the replica elsewhere must end with the
 * bytes of the greatest one. Found by `npm run bench durability`: two such PUTs within one
 * millisecond got the same version, the second one's push was answered 409 "already have
 * it" and counted as delivered, and its bytes were stored nowhere although acknowledged.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { startReplicaServer, type ReplicaServer } from '../src/server.js';
import { compareVersions, parseVersion, type ReplicaVersion } from '../src/replicas/replica-version.js';
import { ADMIN_TOKEN, CLUSTER_SECRET, auth, removeTempDirs, tempDir } from './helpers.js';

const servers: ReplicaServer[] = [];
afterAll(async () => {
  await Promise.all(servers.map((server) => server.close()));
  await removeTempDirs();
});

describe('replica versions', () => {
  it('are distinct for a burst of PUTs on a server that holds no replica, and the greatest one wins', async () => {
    const common = { adminToken: ADMIN_TOKEN, clusterSecret: CLUSTER_SECRET, injectScript: false, syncIntervalMs: 60_000 };
    const holder = await startReplicaServer({ ...common, dataDir: await tempDir() });
    servers.push(holder);
    // The first PUT waits inside the per-path lock while the others queue behind it; then they
    // run back to back, within a millisecond or two.
    let first = true;
    const holdFirstPut = async (operation: { operation: string }): Promise<undefined> => {
      if (operation.operation === 'update' && first) {
        first = false;
        await new Promise((resolve) => setTimeout(resolve, 500));
      }
      return undefined;
    };
    const writer = await startReplicaServer({ ...common, dataDir: await tempDir(), logicalOrigin: holder.url, preFilters: [holdFirstPut] });
    servers.push(writer);
    const replicas = '/.well-known/webpp/replicas/doc.txt';
    expect((await fetch(`${holder.url}${replicas}`, { method: 'POST', headers: auth, body: 'v0' })).status).toBe(201);
    // The writer learns where the replica lives (it holds none itself).
    const listed = await fetch(`${writer.url}/.well-known/webpp/directory`, {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json' },
      body: JSON.stringify({ add: [{ logical: '/doc.txt', servers: [holder.url] }] }),
    });
    expect(listed.status).toBe(200);

    const answers = await Promise.all(
      Array.from({ length: 30 }, async (_, index) => {
        const response = await fetch(`${writer.url}${replicas}`, { method: 'PUT', headers: { ...auth, 'content-type': 'text/plain' }, body: `put ${index}` });
        expect(response.status).toBe(200);
        const result = (await response.json()) as { version: string; stored: boolean; pushes: { ok: boolean }[] };
        expect(result.stored).toBe(false);
        expect(result.pushes.map((push) => push.ok)).toEqual([true]);
        return { body: `put ${index}`, version: parseVersion(result.version) as ReplicaVersion };
      }),
    );
    expect(new Set(answers.map((answer) => `${answer.version.timeMs}@${answer.version.writer}`)).size).toBe(answers.length);
    const newest = answers.reduce((best, answer) => (compareVersions(answer.version, best.version) > 0 ? answer : best));
    expect(await (await fetch(`${holder.url}/doc.txt`)).text()).toBe(newest.body);
  });
});
