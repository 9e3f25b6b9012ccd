/**
 * Fuzzing what the worker reads from responses: the bindings header and the control header,
 * random or mutated from a real header, arriving on a real HTTP response (a Fastify server on
 * loopback) to the ReplicaClient as a fetch event drives it. Whatever arrives:
 *  - respond() never rejects: the page always gets a Response;
 *  - a rejected bindings header changes nothing (bindings, directory version);
 *  - no control value other than `off` switches the worker off.
 *
 * Bounded and reproducible: fixed seed (FUZZ_SEED overrides it), a bounded number of runs.
 */
import type { AddressInfo } from 'node:net';
import fc from 'fast-check';
import Fastify from 'fastify';
import type { FastifyInstance } from 'fastify';
import { BINDINGS_HEADER, CONTROL_HEADER, encodeBindings } from '@webpp/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ReplicaClient } from '../src/replica-client.js';
import { memoryKeyValueStore } from '../src/storage.js';
import { eventIO } from './support/event-io.js';

const SEED = Number(process.env.FUZZ_SEED ?? 20_261_124);

let app: FastifyInstance;
let origin: string;
/** What the server sends on its next answers. */
let next: { bindings?: string; control?: string } = {};

beforeAll(async () => {
  app = Fastify({ forceCloseConnections: true });
  app.get('/*', async (_request, reply) => {
    if (next.bindings !== undefined) reply.header(BINDINGS_HEADER, next.bindings);
    if (next.control !== undefined) reply.header(CONTROL_HEADER, next.control);
    return reply.header('content-type', 'text/plain').send('ok');
  });
  await app.listen({ port: 0, host: '127.0.0.1' });
  origin = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await app.close();
});

function validHeader(version: number): string {
  return encodeBindings({
    directoryVersion: version,
    bindings: [
      { logical: `${origin}/bound.txt`, prefix: false, replicas: [`${origin}/bound.txt`] },
      { logical: `${origin}/dir/`, prefix: true, replicas: [`${origin}/mirror/dir/`] },
    ],
  }).value;
}

/** Header values an HTTP server can send: visible ASCII, space, tab and obs-text. */
const headerValue = fc.stringMatching(/^[\t\x20-\x7e\x80-\xff]{0,300}$/);
const mutation = fc.tuple(fc.nat(), fc.nat(), fc.stringMatching(/^[\x20-\x7e]{0,6}$/));

describe('fuzz: response headers the worker reads', () => {
  it('respond() never rejects, a rejected bindings header changes nothing, no other control value switches off', async () => {
    const client = new ReplicaClient({
      internal: { flushDelayMs: 0 },
      selfOrigin: origin,
      storage: memoryKeyValueStore(),
      observeResourceTiming: false,
      unregister: async () => undefined,
      notifyPages: async () => undefined,
    });
    await client.ready;
    let version = 1;
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(
          headerValue,
          // A real header, with a slice replaced (cuts, splices, flipped characters).
          mutation.map(([at, length, insert]) => {
            const header = validHeader(version + 1);
            const start = at % (header.length + 1);
            return header.slice(0, start) + insert + header.slice(start + (length % 20));
          }),
          fc.constant(undefined),
          // A valid header of a newer directory version (the worker applies it).
          fc.constant(null).map(() => validHeader(version + 1)),
        ),
        fc.oneof({ weight: 5, arbitrary: fc.constant(undefined) }, headerValue.filter((value) => value.trim().toLowerCase() !== 'off'), fc.constantFrom('of', 'offf', 'on', 'o ff', 'off;x', '"off"')),
        fc.constantFrom('/page.txt', '/bound.txt', '/dir/x.txt'),
        async (bindings, control, path) => {
          next = { ...(bindings === undefined ? {} : { bindings }), ...(control === undefined ? {} : { control }) };
          const before = { size: client.bindings.size, directoryVersion: client.bindings.directoryVersion, json: JSON.stringify(client.snapshot().bindings) };
          const rejectedBefore = client.snapshot().counters.bindingsHeadersRejected;
          const io = eventIO();
          const request = new Request(`${origin}${path}`);
          const route = client.route(request);
          const response = await client.respond(request, io);
          expect(response).toBeInstanceOf(Response);
          if (response.type !== 'error') await response.text();
          await io.settled();
          const state = client.snapshot();
          if (state.counters.bindingsHeadersRejected > rejectedBefore) {
            expect({ size: client.bindings.size, directoryVersion: client.bindings.directoryVersion, json: JSON.stringify(state.bindings) }).toEqual(before);
          }
          if (client.bindings.directoryVersion > version) version = client.bindings.directoryVersion;
          // Only "off" (the kill switch, tested in replica-client.test.ts) switches the worker off.
          expect(client.isEnabled, `route ${route}, control ${JSON.stringify(control)}`).toBe(true);
        },
      ).beforeEach(() => {
        next = {};
      }),
      { seed: SEED, numRuns: 100 },
    );
    // The property saw both kinds of header.
    const { counters } = client.snapshot();
    expect(counters.bindingsHeadersRejected).toBeGreaterThan(10);
    expect(counters.bindingsHeadersAccepted).toBeGreaterThan(10);
  });
});
