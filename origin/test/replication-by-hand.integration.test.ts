/**
 * An operator creates by hand (management POST) a replica the home had just placed
 * automatically on a co-op, before the co-op fetched it lazily (three real servers on
 * loopback; only the home has the site's files). Replicas placed by hand are never
 * withdrawn (docs/origin.md, Load-driven replication): the POST adopts the pair. Before,
 * the pair kept its automatic marker, so the home withdrew it once the load fell and the
 * co-op deleted the operator's upload as a withdrawn lazy copy.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startReplicaServer, type ReplicaServer } from '../src/server.js';
import { FAST_REPLICATION, TRIO as NAMES, type TrioName as Name, auth, removeTempDirs, tempDir, trioAddresses, trioMember, waitFor } from './helpers.js';

const T_HOME_MS = 1500;
const WINDOW_MS = 2000;

let ports: Record<Name, number>;
let urls: Record<Name, string>;
const servers = {} as Record<Name, ReplicaServer | undefined>;

function server(name: Name): ReplicaServer {
  const found = servers[name];
  if (found === undefined) throw new Error(`${name} is not running`);
  return found;
}

beforeAll(async () => {
  const homeRoot = await tempDir('webpp-by-hand-site-');
  await mkdir(`${homeRoot}/img`);
  await writeFile(`${homeRoot}/img/hot.png`, Buffer.alloc(4000, 1));
  ({ ports, urls } = await trioAddresses());
  for (const name of NAMES) {
    servers[name] = await startReplicaServer({
      ...trioMember(name, ports, urls),
      ...FAST_REPLICATION,
      root: name === 'a' ? homeRoot : await tempDir(`webpp-by-hand-empty-${name}-`),
      dataDir: await tempDir(`webpp-by-hand-${name}-`),
      replicationWindowMs: WINDOW_MS,
      replicationHomeMs: T_HOME_MS,
    });
  }
}, 30_000);

afterAll(async () => {
  for (const name of NAMES) await servers[name]?.close();
  await removeTempDirs();
});

describe('a replica created by hand over an automatic placement', () => {
  it('is kept once the load falls: neither withdrawn from the directory nor deleted on the co-op', async () => {
    const hot = `${urls.a}/img/hot.png`;
    for (let i = 0; i < 150; i += 1) await (await fetch(`http://127.0.0.1:${ports.a}/img/hot.png`)).arrayBuffer();
    const controller = server('a').app.webpp.replication;
    const placed = await waitFor('a placement of /img/hot.png', () => controller?.stats().decisions.find((decision) => decision.kind === 'place'));
    const coop = NAMES.find((name) => urls[name] === placed.coop) as Name;
    const physical = `${urls[coop]}/img/hot.png`;
    await waitFor('the co-op to list the placement', () => server(coop).app.webpp.directory.has(hot, physical));

    // The operator uploads the co-op's replica by hand (it had not fetched it yet).
    const byHand = Buffer.alloc(4000, 7);
    const created = await fetch(`http://127.0.0.1:${ports[coop]}/.well-known/webpp/replicas/img/hot.png`, {
      method: 'POST',
      headers: { ...auth, 'content-type': 'image/png' },
      body: byHand,
    });
    expect(created.status).toBe(201);

    // No more requests: the load falls within one window; T_home passes.
    await new Promise((resolve) => setTimeout(resolve, T_HOME_MS + 2 * WINDOW_MS));
    controller?.decide();
    await new Promise((resolve) => setTimeout(resolve, 1000));
    for (const name of NAMES) expect(server(name).app.webpp.directory.lookup(hot)?.physicalUrls ?? []).toContain(physical);
    expect(controller?.stats().decisions.filter((decision) => decision.coop === placed.coop && decision.kind !== 'place')).toEqual([]);
    const served = await fetch(`http://127.0.0.1:${ports[coop]}/img/hot.png`);
    expect(served.status).toBe(200);
    expect(Buffer.from(await served.arrayBuffer()).equals(byHand)).toBe(true);
  }, 30_000);
});
