/**
 * The cooperative layer between three real servers (Fastify on loopback ports, signed peer
 * calls, real HTTP), each with a small byte-bounded LRU memory standing in for the local
 * cache so that this layer is tested on its own: lookups through the home, holder hints,
 * fills to the home, the second chance of an evicted singlet, invalidation on every server
 * and the refusal of a copy read before it, replays refused, and rehoming when a server dies.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import Fastify, { type FastifyInstance } from 'fastify';
import { CooperativeCache, type InvalidationTarget, type LocalCache } from '../src/cache/cluster/cooperative-cache.js';
import { ClusterInvalidation } from '../src/cache/cluster/cluster-invalidation.js';
import { peerCacheRoutes } from '../src/routes/peer-cache.js';
import { rankServers } from '../src/cache/cluster/rendezvous.js';
import { resolveOptions } from '../src/options.js';
import { clusterRequest } from '../src/sync/cluster-client.js';
import { encodeObject, PEER_CACHE_OBJECT_PATH, type CacheObject } from '../src/cache/cluster/peer-protocol.js';
import { CLUSTER_SECRET, freePort, waitFor } from './helpers.js';

/** A byte-bounded LRU memory: the simplest real local cache. */
class LruMemory implements LocalCache {
  readonly entries = new Map<string, CacheObject>();
  bytes = 0;
  evictions = 0;
  constructor(
    private readonly maxBytes: number,
    private readonly onEvict: (object: CacheObject) => void,
    private readonly onStore: (path: string) => void,
  ) {}
  peek(path: string): CacheObject | undefined {
    return this.entries.get(path);
  }
  get(path: string): CacheObject | undefined {
    const entry = this.entries.get(path);
    if (entry !== undefined) {
      this.entries.delete(path);
      this.entries.set(path, entry);
    }
    return entry;
  }
  offer(object: CacheObject): boolean {
    if (object.body.byteLength > this.maxBytes) return false;
    this.remove({ path: object.path });
    while (this.bytes + object.body.byteLength > this.maxBytes) {
      const [oldest] = this.entries.values();
      if (oldest === undefined) break;
      this.entries.delete(oldest.path);
      this.bytes -= oldest.body.byteLength;
      this.evictions += 1;
      this.onEvict(oldest);
    }
    this.entries.set(object.path, object);
    this.bytes += object.body.byteLength;
    this.onStore(object.path);
    return true;
  }
  remove(target: InvalidationTarget): number {
    let removed = 0;
    for (const [path, entry] of this.entries) {
      if ('path' in target ? path === target.path : path.startsWith(target.prefix)) {
        this.entries.delete(path);
        this.bytes -= entry.body.byteLength;
        removed += 1;
      }
    }
    return removed;
  }
  counters(): Record<string, number> {
    return { evictions: this.evictions, bytes: this.bytes };
  }
}

interface Node {
  url: string;
  port: number;
  app: FastifyInstance;
  cooperative: CooperativeCache;
  invalidation: ClusterInvalidation;
  memory: LruMemory;
}

const nodes: Node[] = [];
const quiet = { debug: () => undefined, warn: () => undefined };

function object(path: string, bytes: number, readAtMs = Date.now()): CacheObject {
  return { path, status: 200, headers: { 'content-type': 'text/plain', etag: `"${path}"` }, body: Buffer.alloc(bytes, path), expiresAtMs: Date.now() + 600_000, readAtMs };
}

async function startNode(port: number, urls: string[], maxBytes: number): Promise<Node> {
  const url = `http://127.0.0.1:${port}`;
  const options = resolveOptions({ publicUrl: url, peers: urls.filter((other) => other !== url), clusterSecret: CLUSTER_SECRET });
  const cooperative = new CooperativeCache({
    self: url,
    peers: options.peers,
    secret: CLUSTER_SECRET,
    // Generous: on a loaded machine a live peer answering late must not be marked down (which
    // re-ranks the homes under the test). A dead peer refuses the connection at once.
    peerTimeoutMs: 5000,
    maxClockSkewMs: options.maxClockSkewMs,
    reportIntervalMs: 100,
    reportThreshold: 4,
    agingIntervalMs: 0,
    hotShare: 0.5,
    hotCopies: 2,
    recirculation: 2,
    maxObjectBytes: 1024 * 1024,
    maxPushesInFlight: 8,
    log: quiet,
  });
  const memory = new LruMemory(maxBytes, (evicted) => cooperative.evicted(evicted), (path) => cooperative.stored(path));
  cooperative.attach(memory);
  const invalidation = new ClusterInvalidation(cooperative);
  const app = Fastify();
  await app.register(peerCacheRoutes, { options, cooperative, invalidation });
  await app.listen({ port, host: '127.0.0.1' });
  cooperative.start();
  return { url, port, app, cooperative, invalidation, memory };
}

/** What a server does for one request: local memory, else the cluster, else "disk" (a fill). */
async function request(node: Node, path: string, bytes = 1000): Promise<'local' | 'peer' | 'disk'> {
  node.cooperative.recordAccess(path);
  if (node.memory.get(path) !== undefined) return 'local';
  const fromPeer = await node.cooperative.lookup(path);
  if (fromPeer !== undefined) {
    if (node.cooperative.keepsCopy(path)) node.memory.offer(fromPeer);
    return 'peer';
  }
  const read = object(path, bytes);
  if (node.cooperative.placeFill(read)) node.memory.offer(read);
  return 'disk';
}

const byUrl = (url: string): Node => nodes.find((node) => node.url === url) as Node;

beforeAll(async () => {
  const ports = [await freePort(), await freePort(), await freePort()];
  const urls = ports.map((port) => `http://127.0.0.1:${port}`);
  for (const port of ports) nodes.push(await startNode(port, urls, 8 * 1000));
});

afterAll(async () => {
  for (const node of nodes) {
    await node.cooperative.stop();
    await node.app.close();
  }
});

describe('cooperative cache between three servers', () => {
  it('serves a miss from the home’s memory, and a copy read from disk elsewhere goes to its home', async () => {
    const urls = nodes.map((node) => node.url);
    const path = '/a/one.html';
    const [home, second, third] = rankServers(path, urls) as [string, string, string];
    // Read from disk at a server that is not the home: it does not keep it, it sends it home.
    expect(await request(byUrl(second), path)).toBe('disk');
    expect(byUrl(second).memory.peek(path)).toBeUndefined();
    await waitFor('condition 1', () => byUrl(home).memory.peek(path) !== undefined, { timeoutMs: 5000 });
    expect(byUrl(home).cooperative.counters.fillsKept).toBe(1);
    // The third server misses locally and gets it from the home's memory, not from disk.
    expect(await request(byUrl(third), path)).toBe('peer');
    expect(byUrl(third).cooperative.counters.peerHits).toBe(1);
    expect(byUrl(third).cooperative.counters.arrayMisses).toBe(0);
  });

  it('keeps a hot object on the k best-ranked servers once its global count passes the threshold', async () => {
    const urls = nodes.map((node) => node.url);
    const path = '/a/hot.html';
    const [home, keeper, outsider] = rankServers(path, urls) as [string, string, string];
    expect(await request(byUrl(home), path)).toBe('disk');
    // Many hits at the outsider and the keeper: reports reach the home, the home's count comes back.
    for (let index = 0; index < 8; index += 1) {
      await request(byUrl(outsider), path);
      await request(byUrl(keeper), path);
    }
    await waitFor('condition 2', () => byUrl(keeper).cooperative.countOf(path) >= 6, { timeoutMs: 5000 });
    await request(byUrl(keeper), path);
    expect(byUrl(keeper).memory.peek(path)).toBeDefined(); // hotCopies = 2: home + keeper
    expect(await request(byUrl(keeper), path)).toBe('local');
    expect(byUrl(outsider).memory.peek(path)).toBeUndefined(); // not among the 2
  });

  it('gives an evicted singlet a second chance on a random peer, which the home then names as holder', async () => {
    const urls = nodes.map((node) => node.url);
    // Fill one server's memory with objects it is home of, until the first is evicted.
    const target = nodes[0] as Node;
    const mine = Array.from({ length: 400 }, (_, index) => `/b/${index}.bin`).filter((path) => rankServers(path, urls)[0] === target.url);
    const first = mine[0] as string;
    // Each asked for twice (one-hit wonders get no second chance). 8 KB memory: 8 fit.
    for (const path of mine.slice(0, 12)) {
      target.cooperative.recordAccess(path);
      await request(target, path, 1000);
    }
    expect(target.memory.peek(first)).toBeUndefined();
    expect(target.cooperative.counters.secondChancesSent).toBeGreaterThan(0);
    await waitFor('condition 3', () => nodes.some((node) => node !== target && node.memory.peek(first) !== undefined), { timeoutMs: 5000 });
    const holder = nodes.find((node) => node !== target && node.memory.peek(first) !== undefined) as Node;
    expect(holder.cooperative.counters.secondChancesKept).toBeGreaterThan(0);
    // The holder tells the home with its next report; the home's miss is then a peer hit.
    await waitFor('condition 4', () => target.cooperative.counts.holdersOf(first).includes(holder.url), { timeoutMs: 5000 });
    expect(await request(target, first)).toBe('peer');
  });

  it('removes every copy on every server before the invalidation resolves, and refuses a copy read before it', async () => {
    const path = '/c/page.html';
    for (const node of nodes) node.memory.offer(object(path, 500));
    const readBefore = object(path, 500, Date.now() - 10);
    const outcome = await (nodes[1] as Node).invalidation.invalidateEverywhere({ prefix: '/c/' });
    expect(outcome.pending).toEqual([]);
    expect(outcome.acknowledged).toHaveLength(2);
    for (const node of nodes) expect(node.memory.peek(path)).toBeUndefined();
    // A fill read before the invalidation arrives late: refused.
    const home = byUrl(rankServers(path, nodes.map((node) => node.url))[0] as string);
    expect(home.cooperative.receivePush(readBefore, 'fill', 0, undefined)).toBe(false);
    expect(home.memory.peek(path)).toBeUndefined();
    expect(home.cooperative.counters.pushesRefusedStale).toBe(1);
  });

  it('refuses a replayed push and an unsigned one', async () => {
    const [from, to] = nodes as [Node, Node];
    const url = `${to.url}${PEER_CACHE_OBJECT_PATH}?path=%2Fd%2Fx&from=${encodeURIComponent(from.url)}&n=${Date.now()}.AAAAAAAAAAAAAAAA`;
    const body = encodeObject(object('/d/x', 100), { reason: 'fill' });
    const first = await clusterRequest(CLUSTER_SECRET, url, { method: 'POST', body, headers: { 'content-type': 'application/octet-stream' }, timeoutMs: 2000 });
    expect([201, 202]).toContain(first.status);
    const replay = await clusterRequest(CLUSTER_SECRET, url, { method: 'POST', body, headers: { 'content-type': 'application/octet-stream' }, timeoutMs: 2000 });
    expect(replay.status).toBe(403);
    const unsigned = await fetch(url, { method: 'POST', body });
    expect(unsigned.status).toBe(401);
  });

  it('rehomes a dead server’s objects: the first call to it fails, the next home answers at once', async () => {
    const urls = nodes.map((node) => node.url);
    const dead = nodes[2] as Node;
    const paths = Array.from({ length: 400 }, (_, index) => `/e/${index}.html`).filter((candidate) => rankServers(candidate, urls)[0] === dead.url);
    const [path, other] = paths as [string, string];
    const [, nextHome] = rankServers(path, urls) as [string, string];
    const asker = nodes.find((node) => node !== dead && node.url !== nextHome) as Node;
    // The runner-up already holds a copy (say, a hot copy) when the home dies.
    byUrl(nextHome).memory.offer(object(path, 700));
    await dead.cooperative.stop();
    await dead.app.close();
    expect(asker.cooperative.homeOf(path)).toBe(dead.url);
    // The call to the dead home fails; the same request asks the new home, which has it.
    expect(await request(asker, path)).toBe('peer');
    expect(asker.cooperative.membership.isLive(dead.url)).toBe(false);
    expect(asker.cooperative.homeOf(path)).toBe(nextHome);
    // Another object of the dead server: read from disk, and its copy goes to its new home.
    const otherHome = rankServers(other, urls)[1] as string;
    const errorsBefore = asker.cooperative.counters.peerErrors;
    expect(await request(asker, other)).toBe('disk');
    expect(asker.cooperative.counters.peerErrors).toBe(errorsBefore); // the dead server is not asked again
    if (otherHome !== asker.url) {
      await waitFor('the new home keeps the fill', () => byUrl(otherHome).memory.peek(other) !== undefined, { timeoutMs: 5000 });
      expect(await request(asker, other)).toBe('peer');
    } else {
      expect(await request(asker, other)).toBe('local');
    }
  });
});
