/**
 * The static bindings file, read by the worker from a real HTTP server on loopback: fetched
 * once, revalidated with its ETag when stale, a 404 remembered, a broken answer ignored.
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { STATIC_BINDINGS_PATH } from '@webpp/core';
import { StaticBindings } from '../src/static-bindings.js';
import { memoryKeyValueStore } from '../src/storage.js';

interface FileServer {
  origin: string;
  requests: IncomingMessage[];
  answer: { status: number; body: string; etag?: string };
  server: Server;
}

const servers: Server[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => new Promise((done) => server.close(done))));
});

async function fileServer(answer: FileServer['answer']): Promise<FileServer> {
  const state = { requests: [] as IncomingMessage[], answer } as FileServer;
  state.server = createServer((request, response) => {
    state.requests.push(request);
    const { status, body, etag } = state.answer;
    if (request.url !== STATIC_BINDINGS_PATH) return void response.writeHead(404).end();
    if (etag !== undefined && request.headers['if-none-match'] === etag) return void response.writeHead(304, { etag }).end();
    response.writeHead(status, etag === undefined ? {} : { etag }).end(body);
  });
  servers.push(state.server);
  await new Promise<void>((done) => state.server.listen(0, '127.0.0.1', done));
  const address = state.server.address();
  state.origin = `http://127.0.0.1:${typeof address === 'object' && address !== null ? address.port : 0}`;
  return state;
}

function client(server: FileServer, clock: { nowMs: number }, storage = memoryKeyValueStore()): StaticBindings {
  return new StaticBindings({ selfOrigin: server.origin, storage, fetch: (request) => fetch(request), now: () => clock.nowMs, staleAfterMs: 1_000, missingRetryMs: 60_000 });
}

describe('StaticBindings', () => {
  it('reads the lines once, then revalidates with the ETag when stale and re-applies the kept copy', async () => {
    const server = await fileServer({ status: 200, body: '# comment\n1.j.1.AAA\n\n1.j.1.BBB\n', etag: '"v1"' });
    const clock = { nowMs: 0 };
    const statics = client(server, clock);
    const applied: string[] = [];
    expect(await statics.whenHeaderMissing((value) => applied.push(value))).toBe('fetched');
    expect(applied).toEqual(['1.j.1.AAA', '1.j.1.BBB']);
    expect(await statics.whenHeaderMissing((value) => applied.push(value))).toBe('fresh');
    expect(server.requests).toHaveLength(1);

    clock.nowMs += 2_000;
    expect(await statics.whenHeaderMissing((value) => applied.push(value))).toBe('revalidated');
    expect(server.requests[1]?.headers['if-none-match']).toBe('"v1"');
    expect(applied).toEqual(['1.j.1.AAA', '1.j.1.BBB', '1.j.1.AAA', '1.j.1.BBB']);

    server.answer = { status: 200, body: '1.j.2.CCC\n', etag: '"v2"' };
    clock.nowMs += 2_000;
    expect(await statics.whenHeaderMissing((value) => applied.push(value))).toBe('fetched');
    expect(applied.at(-1)).toBe('1.j.2.CCC');
  });

  it('remembers a 404 across worker restarts until missingRetryMs has passed', async () => {
    const server = await fileServer({ status: 404, body: '' });
    const clock = { nowMs: 0 };
    const storage = memoryKeyValueStore();
    expect(await client(server, clock, storage).whenHeaderMissing(() => undefined)).toBe('missing');
    // A new worker start, same IndexedDB.
    const restarted = client(server, clock, storage);
    expect(await restarted.whenHeaderMissing(() => undefined)).toBe('remembered-missing');
    expect(server.requests).toHaveLength(1);
    clock.nowMs += 61_000;
    server.answer = { status: 200, body: '1.j.1.AAA\n' };
    const applied: string[] = [];
    expect(await client(server, clock, storage).whenHeaderMissing((value) => applied.push(value))).toBe('fetched');
    expect(applied).toEqual(['1.j.1.AAA']);
  });

  it('fails open: a server error or an unreachable server applies nothing and does not throw', async () => {
    const server = await fileServer({ status: 500, body: 'oops' });
    const applied: string[] = [];
    expect(await client(server, { nowMs: 0 }).whenHeaderMissing((value) => applied.push(value))).toBe('failed');
    await new Promise((done) => server.server.close(done));
    servers.splice(servers.indexOf(server.server), 1);
    expect(await client(server, { nowMs: 0 }).whenHeaderMissing((value) => applied.push(value))).toBe('failed');
    expect(applied).toEqual([]);
  });

  it('shares one request between concurrent pages', async () => {
    const server = await fileServer({ status: 200, body: '1.j.1.AAA\n' });
    const statics = client(server, { nowMs: 0 });
    const outcomes = await Promise.all([statics.whenHeaderMissing(() => undefined), statics.whenHeaderMissing(() => undefined)]);
    expect(outcomes).toEqual(['fetched', 'fetched']);
    expect(server.requests).toHaveLength(1);
  });
});
