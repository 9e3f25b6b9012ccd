/**
 * A home never places a resource on a co-op that cannot store it (three real servers on
 * loopback; only the home has the site's files). A co-op's lazy fetch refuses bodies over
 * its `maxReplicaBytes`, so a placement of a larger resource made every request bound to
 * that co-op a 502 until the home withdrew it, T_home later. Co-ops now carry their limit in
 * their load record, and the home skips co-ops too small for a resource. The size is the
 * resource's, not the bytes sent per request: a video read in ranges sends far fewer.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startReplicaServer, type ReplicaServer } from '../src/server.js';
import { FAST_REPLICATION, TRIO as NAMES, type TrioName as Name, removeTempDirs, tempDir, trioAddresses, trioMember, waitFor } from './helpers.js';

const COOP_MAX_REPLICA_BYTES = 100_000;

let ports: Record<Name, number>;
let urls: Record<Name, string>;
const servers = {} as Record<Name, ReplicaServer | undefined>;

function server(name: Name): ReplicaServer {
  const found = servers[name];
  if (found === undefined) throw new Error(`${name} is not running`);
  return found;
}

beforeAll(async () => {
  const homeRoot = await tempDir('webpp-coop-limit-site-');
  await mkdir(`${homeRoot}/img`);
  await writeFile(`${homeRoot}/img/large.bin`, Buffer.alloc(300_000, 2));
  await writeFile(`${homeRoot}/img/video.bin`, Buffer.alloc(300_000, 3));
  await writeFile(`${homeRoot}/img/small.png`, Buffer.alloc(4000, 1));
  ({ ports, urls } = await trioAddresses());
  for (const name of NAMES) {
    servers[name] = await startReplicaServer({
      ...trioMember(name, ports, urls),
      ...FAST_REPLICATION,
      root: name === 'a' ? homeRoot : await tempDir(`webpp-coop-limit-empty-${name}-`),
      dataDir: await tempDir(`webpp-coop-limit-${name}-`),
      replicationWindowMs: 20_000,
      ...(name === 'a' ? {} : { maxReplicaBytes: COOP_MAX_REPLICA_BYTES }),
    });
  }
}, 30_000);

afterAll(async () => {
  for (const name of NAMES) await servers[name]?.close();
  await removeTempDirs();
});

describe('a resource larger than a co-op may store (read whole or in ranges)', () => {
  it('is not placed there; what is placed, the co-op serves', async () => {
    const controller = server('a').app.webpp.replication;
    if (controller === undefined) throw new Error('no replication controller');
    // The load builds up with replication off, so that the first decision sees all of it.
    controller.enabled = false;
    for (let i = 0; i < 150; i += 1) await (await fetch(`http://127.0.0.1:${ports.a}/img/large.bin`)).arrayBuffer();
    for (let i = 0; i < 200; i += 1) {
      const range = await fetch(`http://127.0.0.1:${ports.a}/img/video.bin`, { headers: { range: `bytes=${i * 1000}-${i * 1000 + 999}` } });
      expect(range.status).toBe(206);
      await range.arrayBuffer();
    }
    for (let i = 0; i < 100; i += 1) await (await fetch(`http://127.0.0.1:${ports.a}/img/small.png`)).arrayBuffer();
    controller.enabled = true;
    const placed = await waitFor('a placement', () => controller.stats().decisions.find((decision) => decision.kind === 'place'));
    // Whatever happens next, nothing placed may be the large resource.
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const places = controller.stats().decisions.filter((decision) => decision.kind === 'place');
    expect(places.map((decision) => new URL(decision.logical).pathname)).not.toContain('/img/large.bin');
    expect(places.map((decision) => new URL(decision.logical).pathname)).not.toContain('/img/video.bin');
    expect(new URL(placed.logical).pathname).toBe('/img/small.png');
    for (const decision of places) {
      const coop = NAMES.find((name) => urls[name] === decision.coop) as Name;
      const served = await fetch(`http://127.0.0.1:${ports[coop]}${new URL(decision.logical).pathname}`);
      expect(served.status).toBe(200);
      await served.arrayBuffer();
    }
  }, 30_000);
});
