import { afterAll, afterEach, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { ADMIN_TOKEN, ORIGIN_A, ORIGIN_B, auth, buildApp, removeTempDirs, tempDir } from './helpers.js';
import type { ReplicaOperation, ReplicaOutcome } from '../src/options.js';
import { request as httpRequest } from 'node:http';
import { startReplicaServer } from '../src/server.js';

/** Sends a request with the path exactly as given; resolves with the status code. */
function rawRequest(port: number, method: string, path: string, body: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const request = httpRequest({ host: '127.0.0.1', port, method, path, headers: { ...auth, 'content-length': Buffer.byteLength(body) } }, (response) => {
      response.resume();
      response.on('end', () => resolve(response.statusCode ?? 0));
    });
    request.on('error', reject);
    request.end(body);
  });
}

afterAll(removeTempDirs);
let app: FastifyInstance | undefined;
afterEach(async () => {
  await app?.close();
  app = undefined;
});

const R = '/.well-known/webpp/replicas';

/** Everything observable about the replica state, to show that a rejected call changed nothing. */
async function snapshot(instance: FastifyInstance): Promise<string> {
  const listing = await instance.inject({ url: R, headers: auth });
  return JSON.stringify([instance.webpp.directory.toJSON(), listing.json()]);
}

describe('authentication', () => {
  it.each([
    ['no credentials', {}, 401],
    ['a malformed header', { authorization: 'Basic abc' }, 401],
    ['a wrong token', { authorization: 'Bearer wrong-token-wrong-token' }, 403],
    ['a token that is a prefix of the right one', { authorization: `Bearer ${ADMIN_TOKEN.slice(0, -1)}` }, 403],
  ])('answers %s with %i and changes nothing', async (_name, headers, status) => {
    app = await buildApp();
    const before = await snapshot(app);
    for (const method of ['POST', 'PUT', 'DELETE'] as const) {
      const response = await app.inject({ method, url: `${R}/x.html`, headers: { ...headers, 'content-type': 'text/html' }, payload: '<p>x</p>' });
      expect(response.statusCode).toBe(status);
      expect(response.json().code).toBe(status === 401 ? 'WEBPP_ERR_UNAUTHORIZED' : 'WEBPP_ERR_FORBIDDEN');
    }
    expect(await snapshot(app)).toBe(before);
  });

  it('disables management when no admin token is configured', async () => {
    app = await buildApp({ adminToken: undefined });
    const response = await app.inject({ method: 'POST', url: `${R}/x`, headers: auth, payload: 'x' });
    expect(response.statusCode).toBe(403);
    expect(response.json().code).toBe('WEBPP_ERR_DISABLED');
  });
});

describe('input limits', () => {
  it('rejects bodies over maxReplicaBytes with 413 and stores nothing', async () => {
    app = await buildApp({ maxReplicaBytes: 1000 });
    const response = await app.inject({ method: 'POST', url: `${R}/big.bin`, headers: auth, payload: Buffer.alloc(1001) });
    expect(response.statusCode).toBe(413);
    expect(app.webpp.store.size).toBe(0);
    const fits = await app.inject({ method: 'POST', url: `${R}/ok.bin`, headers: auth, payload: Buffer.alloc(1000) });
    expect(fits.statusCode).toBe(201);
  });

  // Sent over a real socket with http.request, which (unlike inject and fetch) sends the
  // path exactly as given, dot segments included.
  it('rejects path traversal and non-normalised paths with 400, changing nothing', async () => {
    const server = await startReplicaServer({ adminToken: ADMIN_TOKEN });
    try {
      const before = await snapshot(server.app);
      for (const path of [
        '/a/../../etc/passwd',
        '/../secret',
        '/%2e%2e/secret',
        '/.%2e/secret',
        '/a%2fb',
        '/a%5Cb',
        '//double',
        '/a/./b',
        '/a/.',
        '/.well-known/webpp/health',
        '/webpp-sw.js',
        '/trailing%',
        '/nul%00byte',
      ]) {
        const status = await rawRequest(server.port, 'POST', `${R}${path}`, 'x');
        expect({ path, status }).toEqual({ path, status: 400 });
      }
      expect(await snapshot(server.app)).toBe(before);
    } finally {
      await server.close();
    }
  });
});

describe('POST, PUT, DELETE on one server', () => {
  it('creates a replica, serves it, adds itself to the directory', async () => {
    app = await buildApp();
    const created = await app.inject({ method: 'POST', url: `${R}/docs/a.txt`, headers: { ...auth, 'content-type': 'text/plain' }, payload: 'hello' });
    expect(created.statusCode).toBe(201);
    expect(created.headers.location).toBe(`${ORIGIN_A}/docs/a.txt`);
    expect(created.json()).toMatchObject({ logicalUrl: `${ORIGIN_A}/docs/a.txt`, size: 5, contentType: 'text/plain' });
    expect(app.webpp.directory.lookup(`${ORIGIN_A}/docs/a.txt`)?.physicalUrls).toEqual([`${ORIGIN_A}/docs/a.txt`]);
    const served = await app.inject('/docs/a.txt');
    expect(served.statusCode).toBe(200);
    expect(served.body).toBe('hello');
    expect(served.headers['content-type']).toBe('text/plain');
    expect(served.headers.etag).toBe(created.json().etag);

    const again = await app.inject({ method: 'POST', url: `${R}/docs/a.txt`, headers: auth, payload: 'other' });
    expect(again.statusCode).toBe(409);
    expect((await app.inject('/docs/a.txt')).body).toBe('hello');
  });

  it('updates with a strictly newer version each time', async () => {
    app = await buildApp();
    await app.inject({ method: 'POST', url: `${R}/v.txt`, headers: auth, payload: 'v1' });
    const versions: number[] = [];
    for (const body of ['v2', 'v3', 'v4']) {
      const response = await app.inject({ method: 'PUT', url: `${R}/v.txt`, headers: auth, payload: body });
      expect(response.statusCode).toBe(200);
      expect(response.json()).toMatchObject({ stored: true, pushes: [] });
      versions.push(Number(String(response.json().version).split('@')[0]));
    }
    expect(versions[1]).toBeGreaterThan(versions[0] as number);
    expect(versions[2]).toBeGreaterThan(versions[1] as number);
    expect((await app.inject('/v.txt')).body).toBe('v4');
  });

  it('answers 404 to PUT and DELETE of unknown resources', async () => {
    app = await buildApp();
    expect((await app.inject({ method: 'PUT', url: `${R}/nope`, headers: auth, payload: 'x' })).statusCode).toBe(404);
    expect((await app.inject({ method: 'DELETE', url: `${R}/nope`, headers: auth })).statusCode).toBe(404);
  });

  it('deletes the replica and its directory entry', async () => {
    app = await buildApp();
    await app.inject({ method: 'POST', url: `${R}/gone.txt`, headers: auth, payload: 'bye' });
    const deleted = await app.inject({ method: 'DELETE', url: `${R}/gone.txt`, headers: auth });
    expect(deleted.statusCode).toBe(200);
    expect(app.webpp.directory.lookup(`${ORIGIN_A}/gone.txt`)).toBeUndefined();
    expect((await app.inject('/gone.txt')).statusCode).toBe(404);
    expect(app.webpp.store.size).toBe(0);
  });

  it('refuses to delete one resource out of a prefix entry', async () => {
    app = await buildApp({ directory: { formatVersion: 1, entries: [{ logical: '/images/*', servers: [ORIGIN_A, ORIGIN_B] }] } });
    const response = await app.inject({ method: 'DELETE', url: `${R}/images/a.png`, headers: auth });
    expect(response.statusCode).toBe(409);
    expect(response.json().code).toBe('WEBPP_ERR_PREFIX_ENTRY');
  });

  it('describes a resource with GET', async () => {
    app = await buildApp({ directory: { formatVersion: 1, entries: [{ logical: '/d.txt', servers: [ORIGIN_B] }] } });
    await app.inject({ method: 'POST', url: `${R}/d.txt`, headers: auth, payload: 'd' });
    const response = await app.inject({ url: `${R}/d.txt`, headers: auth });
    expect(response.json()).toMatchObject({
      logicalUrl: `${ORIGIN_A}/d.txt`,
      stored: { size: 1 },
      replicas: [`${ORIGIN_A}/d.txt`, `${ORIGIN_B}/d.txt`],
    });
  });

  it('keeps concurrent operations on one URL consistent', async () => {
    app = await buildApp();
    await app.inject({ method: 'POST', url: `${R}/race.txt`, headers: auth, payload: 'start' });
    const bodies = Array.from({ length: 30 }, (_, i) => `content-${i}-${'z'.repeat(i * 100)}`);
    const responses = await Promise.all([
      ...bodies.map((body) => app!.inject({ method: 'PUT', url: `${R}/race.txt`, headers: auth, payload: body })),
      app.inject({ method: 'DELETE', url: `${R}/race.txt`, headers: auth }),
    ]);
    const statuses = new Set(responses.map((response) => response.statusCode));
    for (const status of statuses) expect([200, 404]).toContain(status);
    const served = await app.inject('/race.txt');
    const stored = app.webpp.store.get('/race.txt');
    if (stored === undefined) {
      expect(served.statusCode).toBe(404);
    } else {
      // Whatever won, content, metadata and digest belong together.
      expect(bodies).toContain(served.body);
      expect(stored.size).toBe(Buffer.byteLength(served.body));
      const { createHash } = await import('node:crypto');
      expect(stored.digest).toBe(createHash('sha256').update(served.body).digest('hex'));
    }
  });

  it('edits directory entries through POST /.well-known/webpp/directory', async () => {
    app = await buildApp();
    const added = await app.inject({
      method: 'POST',
      url: '/.well-known/webpp/directory',
      headers: auth,
      payload: { add: [{ logical: '/images/*', servers: [ORIGIN_A, ORIGIN_B] }] },
    });
    expect(added.statusCode).toBe(200);
    expect(app.webpp.directory.lookup(`${ORIGIN_A}/images/x.png`)?.physicalUrls).toEqual([`${ORIGIN_A}/images/x.png`, `${ORIGIN_B}/images/x.png`]);
    await app.inject({ method: 'POST', url: '/.well-known/webpp/directory', headers: auth, payload: { remove: [{ logical: '/images/*', servers: [ORIGIN_B] }] } });
    expect(app.webpp.directory.lookup(`${ORIGIN_A}/images/x.png`)?.physicalUrls).toEqual([`${ORIGIN_A}/images/x.png`]);
    const bad = await app.inject({ method: 'POST', url: '/.well-known/webpp/directory', headers: auth, payload: { add: [{ logical: '/x' }] } });
    expect(bad.statusCode).toBe(400);
    expect((await app.inject({ method: 'POST', url: '/.well-known/webpp/directory', payload: { add: [] } })).statusCode).toBe(401);
  });

  it('refuses non-canonical paths in a directory edit with 400, as the replica API does (issue 25 §6)', async () => {
    app = await buildApp();
    const before = JSON.stringify(app.webpp.directory.toJSON());
    const edits: unknown[] = [
      { add: [{ logical: '/crlf\r\nSet-Cookie: x=1', physical: [`${ORIGIN_B}/crlf`] }] },
      { add: [{ logical: '/ok', physical: [`${ORIGIN_B}/crlf\r\nSet-Cookie: x=1`] }] },
      { add: [{ logical: '/a b', servers: [ORIGIN_B] }] },
      { add: [{ logical: '/a/../etc', servers: [ORIGIN_B] }] },
      { add: [{ logical: '/a%2fb', servers: [ORIGIN_B] }] },
      { add: [{ logical: '/a//b', servers: [ORIGIN_B] }] },
      { add: [{ logical: '/tab\there/*', servers: [ORIGIN_B] }] },
      { add: [{ logical: `${ORIGIN_A}/x/./y`, physical: [`${ORIGIN_B}/x/y`] }] },
      { remove: [{ logical: '/crlf\nx', servers: [ORIGIN_B] }] },
    ];
    for (const payload of edits) {
      const response = await app.inject({ method: 'POST', url: '/.well-known/webpp/directory', headers: auth, payload: payload as object });
      expect([response.statusCode, response.json<{ code: string }>().code], JSON.stringify(payload)).toEqual([400, 'WEBPP_ERR_BAD_PATH']);
    }
    expect(JSON.stringify(app.webpp.directory.toJSON())).toBe(before);
    // Canonical spellings still go through: a prefix, an absolute URL, an upper-case escape.
    const good = await app.inject({
      method: 'POST',
      url: '/.well-known/webpp/directory',
      headers: auth,
      payload: { add: [{ logical: '/img/*', servers: [ORIGIN_B] }, { logical: `${ORIGIN_A}/caf%C3%A9`, physical: [`${ORIGIN_B}/caf%C3%A9`] }] },
    });
    expect(good.statusCode).toBe(200);
  });
});

describe('pre-filters and post-filters', () => {
  it('lets a pre-filter veto an operation, leaving everything unchanged', async () => {
    const seen: string[] = [];
    app = await buildApp({
      preFilters: [
        (operation) => {
          seen.push(`${operation.operation}:${operation.path}:${operation.source}`);
          if (operation.path.startsWith('/private/')) return { veto: 'private area', statusCode: 451 };
          return undefined;
        },
        (operation) => {
          if ((operation.content?.byteLength ?? 0) > 10) throw new Error('too long for policy');
        },
      ],
    });
    const before = await snapshot(app);
    const vetoed = await app.inject({ method: 'POST', url: `${R}/private/x`, headers: auth, payload: 'x' });
    expect(vetoed.statusCode).toBe(451);
    expect(vetoed.json()).toMatchObject({ code: 'WEBPP_ERR_VETOED', message: expect.stringContaining('private area') });
    const thrown = await app.inject({ method: 'POST', url: `${R}/long`, headers: auth, payload: 'x'.repeat(11) });
    expect(thrown.statusCode).toBe(403);
    expect(thrown.json().message).toContain('too long for policy');
    expect(await snapshot(app)).toBe(before);
    expect(seen).toEqual(['create:/private/x:admin', 'create:/long:admin']);
  });

  it('runs post-filters after success with the outcome; their errors do not fail the call', async () => {
    const calls: [ReplicaOperation['operation'], ReplicaOutcome][] = [];
    app = await buildApp({
      postFilters: [
        (operation, outcome) => {
          calls.push([operation.operation, outcome]);
        },
        () => {
          throw new Error('post-filter bug');
        },
      ],
    });
    expect((await app.inject({ method: 'POST', url: `${R}/p.txt`, headers: auth, payload: 'p' })).statusCode).toBe(201);
    expect((await app.inject({ method: 'PUT', url: `${R}/p.txt`, headers: auth, payload: 'q' })).statusCode).toBe(200);
    expect((await app.inject({ method: 'DELETE', url: `${R}/p.txt`, headers: auth })).statusCode).toBe(200);
    expect(calls.map(([operation]) => operation)).toEqual(['create', 'update', 'delete']);
    expect(calls[0]?.[1]).toMatchObject({ stored: true, etag: expect.stringMatching(/^"sha256-/) });
    expect(calls[1]?.[1]).toMatchObject({ stored: true, pushes: [] });
  });
});

describe('persistence across restarts', () => {
  it('restores stored replicas and directory entries from dataDir', async () => {
    const dataDir = await tempDir();
    app = await buildApp({ dataDir });
    await app.inject({ method: 'POST', url: `${R}/kept.html`, headers: { ...auth, 'content-type': 'text/html' }, payload: '<p>kept</p>' });
    await app.inject({ method: 'POST', url: `${R}/removed.txt`, headers: auth, payload: 'r' });
    await app.inject({ method: 'DELETE', url: `${R}/removed.txt`, headers: auth });
    const directoryBefore = app.webpp.directory.toJSON();
    await app.close();

    app = await buildApp({ dataDir });
    expect(app.webpp.directory.toJSON()).toEqual(directoryBefore);
    const served = await app.inject('/kept.html');
    expect(served.statusCode).toBe(200);
    expect(served.body).toContain('<p>kept</p>');
    expect((await app.inject('/removed.txt')).statusCode).toBe(404);
  });
});
