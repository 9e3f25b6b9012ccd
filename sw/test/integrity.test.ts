/**
 * Integrity of replica bodies (integrity.ts, integrity-guard.ts) through the ReplicaClient,
 * against real HTTP servers on loopback: the site's own origin gives the digests, one replica
 * serves the right bytes and one tampers with them.
 */
import { createHash } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import Fastify from 'fastify';
import type { FastifyInstance } from 'fastify';
import { BINDINGS_HEADER, encodeBindings } from '@webpp/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPolicy, registerPolicy } from '@webpp/core';
import { createIntegrity } from '../src/integrity-guard.js';
import { ReplicaClient } from '../src/replica-client.js';
import { memoryKeyValueStore } from '../src/storage.js';
import type { WebppEvent } from '../src/messages.js';
import { checkBody, sha256Integrity, verifyingResponse } from '../src/integrity.js';
import { eventIO } from './support/event-io.js';

const SMALL = Buffer.from('the right bytes '.repeat(64));
const LARGE = Buffer.alloc(256 * 1024, 7);

function sri(bytes: Buffer): string {
  return `sha256-${createHash('sha256').update(bytes).digest('base64')}`;
}

interface Server {
  origin: string;
  app: FastifyInstance;
  tamper: boolean;
  hits: string[];
}
const servers: Server[] = [];
let site: Server;
let good: Server;
let bad: Server;

function bindingsHeader(withDigestsOf: (path: string) => Buffer): string {
  const replicas = (path: string) => [good, bad].map((s) => `${s.origin}${path}`);
  return encodeBindings({
    directoryVersion: 1,
    bindings: ['/small.bin', '/large.bin', '/site-only.bin', '/odd.bin', '/moved.bin'].map((path) => ({
      logical: `${site.origin}${path}`,
      prefix: false,
      replicas: path === '/site-only.bin' ? [`${bad.origin}${path}`] : replicas(path),
    })),
    digests: ['/small.bin', '/large.bin', '/site-only.bin', '/odd.bin', '/moved.bin'].map((path) => ({ logical: `${site.origin}${path}`, integrity: sri(withDigestsOf(path)) })),
  }).value;
}

function bodyOf(path: string): Buffer {
  return path.startsWith('/large') ? LARGE : SMALL;
}

async function start(tamper: boolean): Promise<Server> {
  const app = Fastify({ forceCloseConnections: true });
  const server: Server = { origin: '', app, tamper, hits: [] };
  app.get('/*', async (request, reply) => {
    const path = request.url;
    server.hits.push(path);
    const right = bodyOf(path);
    const body = server.tamper ? Buffer.from(right.map((byte, i) => (i === 100 ? byte ^ 1 : byte))) : right;
    // A tampering replica also sends digests of its own bytes: they must not count.
    reply.header(BINDINGS_HEADER, bindingsHeader((p) => (server.tamper ? Buffer.from(bodyOf(p).map((b, i) => (i === 100 ? b ^ 1 : b))) : bodyOf(p))));
    reply.header('access-control-allow-origin', '*');
    // Ways around a check a tampering replica may try: a status other than 200, a redirect.
    if (server.tamper && path === '/odd.bin') reply.code(203);
    if (server.tamper && path === '/moved.bin') return reply.redirect(`${server.origin}/moved-target.bin`, 302);
    return reply.header('content-type', 'application/octet-stream').send(body);
  });
  await app.listen({ port: 0, host: '127.0.0.1' });
  server.origin = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
  servers.push(server);
  return server;
}

beforeAll(async () => {
  site = await start(false);
  good = await start(false);
  bad = await start(true);
  // The tampering replica first, so that every request meets it.
  registerPolicy('bad-first', (deps, options) => ({
    ...createPolicy('refresh', deps, options)!,
    name: 'bad-first',
    plan: ({ candidates }) =>
      [...candidates].sort((a, b) => Number(b === bad.origin) - Number(a === bad.origin)).map((server) => ({ server, timeoutMs: 2_000, reason: 'test' })),
  }));
});

afterAll(async () => {
  for (const server of servers) await server.app.close();
});

function newClient(storage = memoryKeyValueStore()): { instance: ReplicaClient; events: WebppEvent[] } {
  const events: WebppEvent[] = [];
  const instance = new ReplicaClient({
    settings: { policy: 'bad-first' },
    internal: { preset: 'fast', flushDelayMs: 0 },
    policies: createPolicy, // core's registry, where the test registers 'bad-first'
    integrity: createIntegrity, // the integrity add-on (webpp-sw-integrity.js)
    selfOrigin: site.origin,
    storage,
    observeResourceTiming: false,
    publish: (batch) => void events.push(...batch),
    unregister: async () => undefined,
    notifyPages: async () => undefined,
    verifyBufferBytes: 64 * 1024,
  });
  return { instance, events };
}

async function learnedClient(storage = memoryKeyValueStore()): Promise<{ instance: ReplicaClient; events: WebppEvent[] }> {
  const { instance, events } = newClient(storage);
  await instance.ready;
  const io = eventIO();
  // The own origin's page: bindings and digests (the only digests that count).
  await (await instance.respond(new Request(`${site.origin}/page`), io)).arrayBuffer();
  await io.settled();
  return { instance, events };
}

async function get(instance: ReplicaClient, path: string): Promise<Response> {
  const io = eventIO();
  const response = await instance.respond(new Request(`${site.origin}${path}`), io);
  void io.settled();
  return response;
}

describe('integrity of replica bodies', () => {
  it('a small tampered body never reaches the page: it fails over to the next replica, and names the replica', async () => {
    const { instance, events } = await learnedClient();
    const response = await get(instance, '/small.bin');
    expect(Buffer.from(await response.arrayBuffer()).equals(SMALL)).toBe(true);
    const decision = instance.snapshot().decisions.at(-1);
    expect(decision?.attempts.map((a) => [a.server, a.outcome])).toEqual([
      [bad.origin, 'network-error'],
      [good.origin, 'served'],
    ]);
    expect(decision?.attempts[0]?.error).toMatch(/^integrity: body hashes to sha256-/);
    expect(instance.snapshot().servers.find((view) => view.server === bad.origin)?.state).toBe('failed');
    expect(instance.snapshot().counters.integrityFailures).toBe(1);
    await new Promise((resolve) => setTimeout(resolve, 5));
    expect(events).toContainEqual(
      expect.objectContaining({ type: 'integrity-failure', server: bad.origin, logicalUrl: `${site.origin}/small.bin`, streamed: false }),
    );
  });

  it('a tampering replica cannot skip the check with a 203 or a redirect: both fail over to the right bytes', async () => {
    const { instance } = await learnedClient();
    for (const path of ['/odd.bin', '/moved.bin']) {
      const response = await get(instance, path);
      expect(response.status).toBe(200);
      expect(Buffer.from(await response.arrayBuffer()).equals(SMALL)).toBe(true);
      const decision = instance.snapshot().decisions.at(-1);
      expect(decision?.attempts.map((a) => [a.server, a.outcome])).toEqual([
        [bad.origin, 'network-error'],
        [good.origin, 'served'],
      ]);
    }
  });

  it('when every replica tampers, the primary copy on the own origin serves', async () => {
    const { instance } = await learnedClient();
    site.hits.length = 0;
    const response = await get(instance, '/site-only.bin');
    expect(Buffer.from(await response.arrayBuffer()).equals(SMALL)).toBe(true);
    expect(instance.snapshot().decisions.at(-1)?.attempts.map((a) => [a.server, a.reason, a.outcome])).toEqual([
      [bad.origin, 'test', 'network-error'],
      [site.origin, 'integrity-primary-copy', 'served'],
    ]);
    expect(site.hits).toEqual(['/site-only.bin']);
  });

  it('digests survive a worker restart (IndexedDB): a new worker still catches the replica', async () => {
    const storage = memoryKeyValueStore();
    const first = await learnedClient(storage);
    await first.instance.flush();
    const { instance } = newClient(storage);
    await instance.ready;
    const response = await get(instance, '/small.bin');
    expect(Buffer.from(await response.arrayBuffer()).equals(SMALL)).toBe(true);
    expect(instance.snapshot().counters.integrityFailures).toBe(1);
    expect(instance.snapshot().counters.observed).toBe(0);
  });

  it('a large tampered body errors at its end instead of ending with wrong bytes', async () => {
    const { instance, events } = await learnedClient();
    const response = await get(instance, '/large.bin');
    expect(response.status).toBe(200);
    await expect(response.arrayBuffer()).rejects.toThrow();
    await new Promise((resolve) => setTimeout(resolve, 5));
    expect(events).toContainEqual(expect.objectContaining({ type: 'integrity-failure', server: bad.origin, streamed: true }));
    expect(instance.snapshot().servers.find((view) => view.server === bad.origin)?.state).toBe('failed');
  });

  it('a large right body streams through whole', async () => {
    const { instance } = await learnedClient();
    bad.tamper = false;
    try {
      const response = await get(instance, '/large.bin');
      expect(Buffer.from(await response.arrayBuffer()).equals(LARGE)).toBe(true);
      expect(instance.snapshot().counters.integrityFailures).toBe(0);
    } finally {
      bad.tamper = true;
    }
  });
});

describe('checkBody and verifyingResponse', () => {
  it('verifies what fits the buffer, hands on larger bodies unchecked', async () => {
    const integrity = await sha256Integrity(SMALL);
    expect(integrity).toBe(sri(SMALL));
    const verified = await checkBody(new Response(SMALL), integrity, SMALL.length);
    expect(verified.kind).toBe('verified');
    expect(verified.kind === 'verified' && Buffer.from(await verified.response.arrayBuffer()).equals(SMALL)).toBe(true);
    expect((await checkBody(new Response(SMALL), sri(LARGE), SMALL.length)).kind).toBe('mismatch');
    const tooLarge = await checkBody(new Response(SMALL), integrity, SMALL.length - 1);
    expect(tooLarge.kind).toBe('too-large');
    // The bytes read while finding out are not lost.
    expect(tooLarge.kind === 'too-large' && Buffer.from(await tooLarge.response.arrayBuffer()).equals(SMALL)).toBe(true);
  });

  it('holds back the last chunk until the digest is known', async () => {
    const mismatches: string[] = [];
    const chunks = [new Uint8Array([1, 2]), new Uint8Array([3])];
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        for (const chunk of chunks) controller.enqueue(chunk);
        controller.close();
      },
    });
    const reader = verifyingResponse(new Response(body), sri(Buffer.from([9])), (actual) => mismatches.push(actual)).body!.getReader();
    expect((await reader.read()).value).toEqual(new Uint8Array([1, 2]));
    await expect(reader.read()).rejects.toThrow(/SHA-256/);
    expect(mismatches).toEqual([sri(Buffer.from([1, 2, 3]))]);
  });
});
