/**
 * Engine v3's worker hooks (engine-hooks.ts), driven the way a fetch event drives the
 * worker, against real HTTP servers on loopback (Node's fetch stands in for the browser's,
 * and reports Resource Timing entries as the browser does):
 *  A. a served body leaves the engine's in-flight ledger when it ends, or when the page cancels it;
 *  B. a 200's Content-Length teaches the size of the logical URL (estimates for its other versions);
 *  C. at a head whose rest will take longer than a whole fetch elsewhere, a second fetch goes
 *     there and the page's body continues from whichever answers first, byte for byte; when
 *     the server's pace is not known, only once the body has run as long as a whole fetch
 *     there would take (rent or buy), and never for a body that ended by then; a body whose
 *     link collapses after the head, at its own pace, by a ranged fetch of the rest.
 */
import { Readable } from 'node:stream';
import { BINDINGS_HEADER, encodeBindings } from '@webpp/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ReplicaClient } from '../src/replica-client.js';
import { memoryKeyValueStore } from '../src/storage.js';
import type { WebppEvent } from '../src/messages.js';
import { eventIO } from './support/event-io.js';
import { closeServers, startServer } from './support/servers.js';
import type { TestServer } from './support/servers.js';

const BIG_BYTES = 256 * 1024;
const CHUNK_BYTES = 8 * 1024;
/** The slow replica's pace: one chunk per this many ms (256 KiB in about 1.6 s). */
const SLOW_CHUNK_EVERY_MS = 50;
const big = Buffer.alloc(BIG_BYTES, 0);
for (let i = 0; i < BIG_BYTES; i++) big[i] = (i * 7 + (i >> 10)) & 0xff;

interface Server extends TestServer {
  /** Sends /big.bin in chunks, SLOW_CHUNK_EVERY_MS apart. */
  slowBody: boolean;
  /** Sends the first half of /collapse.bin at once, then the rest a chunk every COLLAPSED_CHUNK_EVERY_MS (its link collapses mid-body). */
  collapse: boolean;
  /** The Range header of every request for a big body (undefined: none). */
  ranges: (string | undefined)[];
}

/** After the collapse: one chunk per this many ms (the second half, 128 KiB, in about 3.2 s). */
const COLLAPSED_CHUNK_EVERY_MS = 200;

const servers: Server[] = [];
let own: Server;
let a: Server;
let b: Server;

function bindingsHeader(): string {
  return encodeBindings({
    directoryVersion: 1,
    bindings: [
      { logical: `${own.origin}/file.txt`, prefix: false, replicas: [`${a.origin}/file.txt`, `${b.origin}/file.txt`] },
      { logical: `${own.origin}/big.bin`, prefix: false, replicas: [`${a.origin}/big.bin`, `${b.origin}/big.bin`] },
      { logical: `${own.origin}/only-a.bin`, prefix: false, replicas: [`${a.origin}/only-a.bin`] },
      { logical: `${own.origin}/collapse.bin`, prefix: false, replicas: [`${a.origin}/collapse.bin`, `${b.origin}/collapse.bin`] },
    ],
  }).value;
}

async function start(slowBody = false, collapse = false): Promise<Server> {
  const server = await startServer<Server>({ slowBody, collapse, ranges: [] }, async (server, request, reply) => {
    reply.header(BINDINGS_HEADER, bindingsHeader());
    reply.header('access-control-expose-headers', '*');
    const path = request.url.split('?')[0];
    if (path === '/big.bin' || path === '/only-a.bin' || path === '/collapse.bin') {
      reply.header('content-type', 'application/octet-stream').header('etag', '"big-v1"').header('last-modified', 'Sat, 28 Nov 2026 10:00:00 GMT');
      const range = request.headers.range;
      server.ranges.push(range);
      const from = /^bytes=(\d+)-$/.exec(range ?? '');
      if (from && !server.collapse && !server.slowBody) {
        const start = Number(from[1]);
        reply.code(206).header('content-range', `bytes ${start}-${BIG_BYTES - 1}/${BIG_BYTES}`).header('content-length', String(BIG_BYTES - start));
        return reply.send(big.subarray(start));
      }
      reply.header('content-length', String(BIG_BYTES));
      if (path === '/collapse.bin' && server.collapse) {
        const halves = async function* (): AsyncGenerator<Buffer> {
          yield big.subarray(0, BIG_BYTES / 2);
          for (let at = BIG_BYTES / 2; at < BIG_BYTES; at += CHUNK_BYTES) {
            await new Promise((resolve) => setTimeout(resolve, COLLAPSED_CHUNK_EVERY_MS));
            yield big.subarray(at, at + CHUNK_BYTES);
          }
        };
        return reply.send(Readable.from(halves()));
      }
      if (!server.slowBody) return reply.send(big);
      const chunks = async function* (): AsyncGenerator<Buffer> {
        for (let at = 0; at < BIG_BYTES; at += CHUNK_BYTES) {
          yield big.subarray(at, at + CHUNK_BYTES);
          await new Promise((resolve) => setTimeout(resolve, SLOW_CHUNK_EVERY_MS));
        }
      };
      return reply.send(Readable.from(chunks()));
    }
    return reply.header('content-type', 'text/plain').send(`from ${server.origin}`);
  });
  servers.push(server);
  return server;
}

beforeAll(async () => {
  own = await start();
  a = await start(true, true);
  b = await start();
});

afterAll(() => closeServers(servers));

function client(observeResourceTiming: boolean): { instance: ReplicaClient; events: WebppEvent[] } {
  const events: WebppEvent[] = [];
  const instance = new ReplicaClient({
    internal: { flushDelayMs: 0 },
    selfOrigin: own.origin,
    storage: memoryKeyValueStore(),
    observeResourceTiming,
    publish: (batch) => void events.push(...batch),
    unregister: async () => undefined,
    notifyPages: async () => undefined,
  });
  return { instance, events };
}

/** One request as a fetch event sends it; resolves with the body the page reads. */
async function get(instance: ReplicaClient, path: string): Promise<Uint8Array> {
  const io = eventIO();
  const response = await instance.respond(new Request(`${own.origin}${path}`), io);
  const body = new Uint8Array(await response.arrayBuffer());
  await io.settled();
  return body;
}

async function learnBindings(instance: ReplicaClient): Promise<void> {
  await instance.ready;
  expect(instance.route(new Request(`${own.origin}/index.html`))).toBe('observe');
  await get(instance, '/index.html');
  expect(instance.route(new Request(`${own.origin}/file.txt`))).toBe('bind');
}

/** Polls `condition` every 50 ms for at most `timeoutMs`. */
async function eventually(condition: () => boolean, timeoutMs = 10_000): Promise<boolean> {
  const endAtMs = Date.now() + timeoutMs;
  while (!condition() && Date.now() < endAtMs) await new Promise((resolve) => setTimeout(resolve, 50));
  return condition();
}

describe('engine v3 hooks in the worker', () => {
  it('A: every served body leaves the in-flight ledger when it ends, so later requests do not see a queue', async () => {
    const { instance } = client(true);
    await learnBindings(instance);
    for (let i = 0; i < 8; i++) expect(new TextDecoder().decode(await get(instance, '/file.txt'))).toMatch(/^from /);
    // Bodies end with their Resource Timing entries, which come a little later.
    const inFlight = (): number => instance.engine.inFlight.snapshot(Date.now()).length;
    expect(await eventually(() => inFlight() === 0), `still in flight: ${JSON.stringify(instance.engine.inFlight.snapshot(Date.now()))}`).toBe(true);
  });

  it('A: a body the page cancels leaves the in-flight ledger at once, not a minute later', async () => {
    // No Resource Timing entries here: only the page's cancel can tell the worker the body is over.
    const { instance } = client(false);
    await learnBindings(instance);
    const io = eventIO();
    const response = await instance.respond(new Request(`${own.origin}/only-a.bin?cancelled`), io);
    const reader = response.body!.getReader();
    expect((await reader.read()).done).toBe(false); // a sends its 256 KiB over about 1.6 s
    expect(instance.engine.inFlight.count(a.origin)).toBe(1);
    await reader.cancel();
    expect(instance.engine.inFlight.count(a.origin)).toBe(0);
    await io.settled();
  });

  it("B: a 200's Content-Length teaches the size of its URL, for its versions never fetched", async () => {
    const { instance } = client(false);
    await learnBindings(instance);
    expect(instance.policy.estimateSizeBytes?.(`${own.origin}/only-a.bin?v=2`)).toBeUndefined();
    expect((await get(instance, '/only-a.bin?v=1')).byteLength).toBe(BIG_BYTES);
    expect(instance.policy.estimateSizeBytes?.(`${own.origin}/only-a.bin?v=2`)).toBe(BIG_BYTES);
  });

  it('C: a thin link found at the head gets a second fetch elsewhere, and the page gets the whole body intact', async () => {
    const { instance, events } = client(false);
    await learnBindings(instance);
    // What this client learnt of both replicas earlier: a a fast first byte on a thin link
    // (100 kB/s), b a slower first byte on a fat one (10 MB/s). The size of /big.bin is unknown,
    // so the plan ranks by first byte and asks a.
    const nowMs = Date.now();
    for (let i = 0; i < 4; i++) {
      instance.engine.observe({ server: a.origin, purpose: 'request', outcome: 'served', ttfbMs: 2, bodyBytes: 100_000, bodyMs: 1_000, nowMs: nowMs - 1_000 + i });
      instance.engine.observe({ server: b.origin, purpose: 'request', outcome: 'served', ttfbMs: 20, bodyBytes: 100_000, bodyMs: 10, nowMs: nowMs - 1_000 + i });
    }
    a.log.length = 0;
    b.log.length = 0;
    const body = await get(instance, '/big.bin');
    expect(Buffer.from(body).equals(big)).toBe(true);
    const decision = instance.snapshot().decisions.at(-1);
    expect(decision?.servedBy).toBe(a.origin);
    // At a's head (256 KiB at 100 kB/s: 2.6 s left) the policy decided again: a whole fetch
    // from b takes about 50 ms. The body continued from b's answer.
    const redecided = events.filter((event) => event.type === 'head-redecided');
    expect(redecided).toHaveLength(1);
    expect(redecided[0]).toMatchObject({ from: a.origin, to: b.origin, switched: true });
    expect(b.log).toContain('GET /big.bin');
  });

  it("C, rent or buy: a body whose server's pace is not known gets the fetch elsewhere once it has run as long as a whole fetch there", async () => {
    const { instance, events } = client(false);
    await learnBindings(instance);
    // a: a fast first byte, but no body has ended there yet (its pace is not known);
    // b: a slower first byte on a fat link (10 MB/s), measured.
    const nowMs = Date.now();
    for (let i = 0; i < 4; i++) {
      instance.engine.observe({ server: a.origin, purpose: 'request', outcome: 'served', ttfbMs: 2, nowMs: nowMs - 1_000 + i });
      instance.engine.observe({ server: b.origin, purpose: 'request', outcome: 'served', ttfbMs: 20, bodyBytes: 100_000, bodyMs: 10, nowMs: nowMs - 1_000 + i });
    }
    a.log.length = 0;
    b.log.length = 0;
    const body = await get(instance, '/big.bin?v=rent');
    expect(Buffer.from(body).equals(big)).toBe(true);
    expect(instance.snapshot().decisions.at(-1)?.servedBy).toBe(a.origin);
    // At a's head nothing said how long its 256 KiB would take (a sends them over about 1.6 s):
    // the worker waited as long as a whole fetch from b takes (about 50 ms), then fetched from b.
    expect(await eventually(() => events.some((event) => event.type === 'head-redecided'))).toBe(true);
    const redecided = events.filter((event) => event.type === 'head-redecided');
    expect(redecided).toHaveLength(1);
    expect(redecided[0]).toMatchObject({ from: a.origin, to: b.origin, switched: true });
    // Started by rent or buy (restHereMs NaN), or by the body's own pace once a's first chunks had come: never on time.
    const started = redecided[0] as { restHereMs: number; elsewhereMs: number };
    expect(started.restHereMs <= 2 * started.elsewhereMs).toBe(false);
    expect(b.log).toContain('GET /big.bin?v=rent');
  });

  it('C, its own pace: a body whose link collapses after the head is finished from elsewhere by a ranged fetch of the rest', async () => {
    const { instance, events } = client(false);
    await learnBindings(instance);
    // Both replicas measured fast (20 ms, 10 MB/s): at a's head its 256 KiB is on time, and a
    // whole second fetch is not worth it. Then a's link collapses after the first half.
    const nowMs = Date.now();
    for (let i = 0; i < 4; i++) {
      instance.engine.observe({ server: a.origin, purpose: 'request', outcome: 'served', ttfbMs: 2, bodyBytes: 100_000, bodyMs: 10, nowMs: nowMs - 1_000 + i });
      instance.engine.observe({ server: b.origin, purpose: 'request', outcome: 'served', ttfbMs: 20, bodyBytes: 100_000, bodyMs: 10, nowMs: nowMs - 1_000 + i });
    }
    a.ranges.length = 0;
    b.ranges.length = 0;
    const body = await get(instance, '/collapse.bin');
    expect(Buffer.from(body).equals(big)).toBe(true);
    expect(instance.snapshot().decisions.at(-1)?.servedBy).toBe(a.origin);
    // The event is published with the next flush of the state reporter.
    expect(await eventually(() => events.some((event) => event.type === 'head-redecided'))).toBe(true);
    const redecided = events.filter((event) => event.type === 'head-redecided');
    expect(redecided).toHaveLength(1);
    expect(redecided[0]).toMatchObject({ from: a.origin, to: b.origin, switched: true });
    // b was asked for the rest only: from a byte past the half a had sent (If-Range keeps it the same entity).
    expect(a.ranges).toEqual([undefined]);
    expect(b.ranges).toHaveLength(1);
    const from = Number(/^bytes=(\d+)-$/.exec(b.ranges[0] ?? '')?.[1]);
    expect(from).toBeGreaterThanOrEqual(BIG_BYTES / 2);
  });

  it('C, rent or buy: a body that ends before a whole fetch elsewhere would have starts no second fetch', async () => {
    const { instance, events } = client(false);
    await learnBindings(instance);
    // b is 400 ms away: a's small body (its pace not known) is over long before.
    const nowMs = Date.now();
    for (let i = 0; i < 4; i++) {
      instance.engine.observe({ server: a.origin, purpose: 'request', outcome: 'served', ttfbMs: 2, nowMs: nowMs - 1_000 + i });
      instance.engine.observe({ server: b.origin, purpose: 'request', outcome: 'served', ttfbMs: 400, bodyBytes: 100_000, bodyMs: 10, nowMs: nowMs - 1_000 + i });
    }
    a.log.length = 0;
    b.log.length = 0;
    expect(new TextDecoder().decode(await get(instance, '/file.txt?v=in-time'))).toBe(`from ${a.origin}`);
    // Past the moment the worker would have looked again (400 ms after the head).
    await new Promise((resolve) => setTimeout(resolve, 800));
    expect(a.log).toContain('GET /file.txt?v=in-time');
    expect(b.log.filter((line) => line.startsWith('GET /file.txt'))).toEqual([]);
    expect(events.filter((event) => event.type === 'head-redecided')).toEqual([]);
  });
});
