/**
 * The cooperative memory cache across three real replica servers (startReplicaServer, static
 * mode, loopback ports, signed peer calls): a miss served from a peer's memory; an
 * invalidation through the HTTP API removing every copy on every server and changing the
 * validator clients revalidate with; a dynamic route rendered once for the cluster and
 * invalidated by the app; a server dying, with its objects rehomed.
 *
 * To tell a peer's memory from a disk, each server's folder holds its own variant of every
 * file ("… from a"): a body from another server's variant came from that server's memory.
 * (The worker's revalidation is checked at the HTTP level here: the conditional request it
 * would send with the old ETag gets a 200 with a new ETag, not a 304.)
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { startReplicaServer, type ReplicaServer } from '../src/server.js';
import { rankServers } from '../src/cache/cluster/rendezvous.js';
import { ADMIN_TOKEN, CLUSTER_SECRET, auth, freePort, removeTempDirs, tempDir, waitFor } from './helpers.js';
import { WEBPP_INTERNALS } from '../src/options/internals.js';

const NAMES = ['a', 'b', 'c'] as const;
type Name = (typeof NAMES)[number];

interface Node {
  name: Name;
  url: string;
  root: string;
  server: ReplicaServer | undefined;
  renders: number;
}

const nodes: Node[] = [];
/** The app's data behind the dynamic route (one database for the cluster). */
const data = { score: 1 };

const byUrl = (url: string): Node => nodes.find((node) => node.url === url) as Node;
const serverOf = (node: Node): ReplicaServer => node.server as ReplicaServer;
const urls = (): string[] => nodes.map((node) => node.url);
/** A path (of `count` candidates) whose home among all three servers is `home`. */
const pathHomedAt = (home: Node, prefix: string): string =>
  Array.from({ length: 300 }, (_, index) => `${prefix}${index}.html`).find((path) => rankServers(path, urls())[0] === home.url) as string;

async function writeEverywhere(path: string, body: (node: Node) => string): Promise<void> {
  for (const node of nodes) await writeFile(join(node.root, path), body(node));
}

async function get(node: Node, path: string, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(`${node.url}${path}`, { headers });
}

beforeAll(async () => {
  for (const name of NAMES) {
    const port = await freePort();
    nodes.push({ name, url: `http://127.0.0.1:${port}`, root: await tempDir(), server: undefined, renders: 0 });
  }
  for (const node of nodes) {
    const port = Number(new URL(node.url).port);
    node.server = await startReplicaServer({
      root: node.root,
      port,
      publicUrl: node.url,
      logicalOrigin: nodes[0]?.url,
      adminToken: ADMIN_TOKEN,
      clusterSecret: CLUSTER_SECRET,
      peers: urls().filter((url) => url !== node.url),
      // Generous: on a loaded machine a live peer answering late must not be marked down (which
      // re-ranks the homes under the test). A dead peer refuses the connection at once.
      peerTimeoutMs: 5000,
      injectScript: false,
      memoryCacheBytes: 4 * 1024 * 1024,
      [WEBPP_INTERNALS]: { memoryCacheReportIntervalMs: 100, memoryCacheReportThreshold: 2, memoryCacheHotShare: 0.34, memoryCacheHotCopies: 3 },
      routes: (app) => {
        app.get('/api/score', { config: { webppCache: { ttlMs: 60_000 } } }, async (_request, reply) => {
          node.renders += 1;
          return reply.type('text/plain').send(`score ${data.score}`);
        });
      },
    });
  }
});

afterAll(async () => {
  for (const node of nodes) await node.server?.close();
  await removeTempDirs();
});

describe('cooperative memory cache, three servers', () => {
  it('serves a local miss from the home server’s memory, before its own disk', async () => {
    const home = nodes[1] as Node;
    const path = pathHomedAt(home, '/peer-');
    await writeEverywhere(path, (node) => `page from ${node.name}`);
    expect(await (await get(home, path)).text()).toBe('page from b'); // read from b's disk, kept in b's memory
    const asker = nodes[0] as Node;
    const peerHitsBefore = serverOf(asker).app.webpp.cache.summary().peerHits;
    const answer = await get(asker, path);
    expect(answer.status).toBe(200);
    expect(await answer.text()).toBe('page from b'); // a's disk says "page from a": this came from b's memory
    expect(serverOf(asker).app.webpp.cache.summary().peerHits).toBe(peerHitsBefore + 1);
    expect(serverOf(home).app.webpp.gauges().cacheCluster?.servers[home.url]?.counters.lookupHitsServed).toBeGreaterThan(0);
  });

  it('an API put on one server is answered by the others (through the home), with no route or file for it anywhere', async () => {
    const putter = nodes[1] as Node;
    // A path homed elsewhere, so the copy must travel to its home for a and c to find it.
    const home = nodes[2] as Node;
    const path = pathHomedAt(home, '/promo-');
    serverOf(putter).app.webpp.cache.put(path, 'promo of the week', { contentType: 'text/plain' });
    await waitFor('the home holds the put copy', async () => serverOf(home).app.webpp.cache.query(path) !== undefined, { timeoutMs: 5_000, intervalMs: 50 });
    for (const node of nodes) {
      const answer = await get(node, path);
      expect(answer.status).toBe(200);
      expect(await answer.text()).toBe('promo of the week');
    }
  });

  it('removes every copy of an invalidated page on every server before the API answers; the old validator no longer matches', async () => {
    const path = '/news.html';
    await writeEverywhere(path, () => 'news v1');
    // Hot is relative (the top memoryCacheHotShare of the counts a server knows): a few pages asked for once each…
    for (const filler of ['/filler-1.html', '/filler-2.html', '/filler-3.html']) {
      await writeEverywhere(filler, () => 'filler');
      for (const node of nodes) await (await get(node, filler)).text();
    }
    // …and this one requested on every server until each holds a copy (hot objects are kept on 3 servers).
    await waitFor(
      'a copy on every server',
      async () => {
        for (const node of nodes) await (await get(node, path)).text();
        return nodes.every((node) => serverOf(node).app.webpp.cache.query(path) !== undefined);
      },
      { timeoutMs: 10_000, intervalMs: 50 },
    );
    const oldEtag = (await get(nodes[2] as Node, path)).headers.get('etag') as string;
    expect(oldEtag).toBeTruthy();
    await writeEverywhere(path, () => 'news v2, longer');
    const invalidated = await fetch(`${(nodes[0] as Node).url}/.well-known/webpp/cache${path}`, { method: 'DELETE', headers: auth });
    expect(invalidated.status).toBeLessThan(300);
    // Acknowledged: no server holds a copy any more.
    for (const node of nodes) expect(serverOf(node).app.webpp.cache.query(path)).toBeUndefined();
    // A client revalidating with the old validator gets the new page everywhere, not a 304.
    for (const node of nodes) {
      const answer = await get(node, path, { 'if-none-match': oldEtag });
      expect(answer.status).toBe(200);
      expect(answer.headers.get('etag')).not.toBe(oldEtag);
      expect(await answer.text()).toBe('news v2, longer');
    }
  });

  it('renders a cacheable dynamic route once for the cluster, and again everywhere after the app invalidates it', async () => {
    const rendersOf = (): number => nodes.reduce((sum, node) => sum + node.renders, 0);
    const [first, second, third] = nodes as [Node, Node, Node];
    expect(await (await get(first, '/api/score')).text()).toBe('score 1');
    expect(rendersOf()).toBe(1);
    // The rendered answer reaches the route's home (kept there), so the others get it from memory.
    await waitFor('the home holds the answer', () => nodes.some((node) => serverOf(node).app.webpp.cache.query('/api/score') !== undefined), { timeoutMs: 5000 });
    expect(await (await get(second, '/api/score')).text()).toBe('score 1');
    expect(await (await get(third, '/api/score')).text()).toBe('score 1');
    expect(rendersOf()).toBe(1);
    // The data changes; the app invalidates the route on a server that does not hold it, if
    // there is one: asked on all three servers, the answer may be hot by now, and hot objects
    // are kept on 3 servers (memoryCacheHotCopies), so on a slow machine every server holds it.
    data.score = 2;
    const elsewhere = nodes.find((node) => serverOf(node).app.webpp.cache.query('/api/score') === undefined) ?? third;
    await serverOf(elsewhere).app.webpp.cache.invalidate('/api/score');
    for (const node of nodes) expect(serverOf(node).app.webpp.cache.query('/api/score')).toBeUndefined();
    for (const node of nodes) expect(await (await get(node, '/api/score')).text()).toBe('score 2');
  });

  it('rehomes a dead server’s objects: the next call fails over to the runner-up, which then holds them', async () => {
    const dying = nodes[2] as Node;
    const path = pathHomedAt(dying, '/rehome-');
    const [, runnerUp] = rankServers(path, urls()) as [string, string];
    const asker = nodes.find((node) => node !== dying && node.url !== runnerUp) as Node;
    await writeEverywhere(path, (node) => `rehomed from ${node.name}`);
    expect(await (await get(dying, path)).text()).toBe('rehomed from c'); // read from c's disk, kept in c's memory
    expect(serverOf(dying).app.webpp.cache.query(path)).toBeDefined();
    // The asker does not ask before c dies: a second request would count the object twice, make
    // it hot once the counts are reported, and the asker would keep its own copy (hot objects
    // are kept on 3 servers), answering from its memory instead of failing over.
    await dying.server?.close();
    dying.server = undefined;
    // c is gone: the request is answered from disk, and its copy goes to the new home.
    expect(await (await get(asker, path)).text()).toBe(`rehomed from ${asker.name}`);
    const cluster = serverOf(asker).app.webpp.gauges().cacheCluster;
    expect(cluster?.downPeers).toContain(dying.url);
    await waitFor('the new home holds it', () => serverOf(byUrl(runnerUp)).app.webpp.cache.query(path) !== undefined, { timeoutMs: 5000 });
    const peerHitsBefore = serverOf(asker).app.webpp.cache.summary().peerHits;
    expect(await (await get(asker, path)).text()).toBe(`rehomed from ${asker.name}`);
    expect(serverOf(asker).app.webpp.cache.summary().peerHits).toBe(peerHitsBefore + 1);
  });
});
