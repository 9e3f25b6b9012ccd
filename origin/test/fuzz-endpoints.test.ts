/**
 * Fuzzing the origin's authenticated endpoints, the management API and the peer endpoints
 * (sync and replica pushes), through Fastify `inject()` on the real plugin with a real data
 * directory. Random methods, paths (dot segments, encoded dots, queries, fragments, very long
 * paths, unicode, NUL), headers (broken Authorization and webpp-cluster-auth, bad versions)
 * and bodies, with and without valid credentials. Asserted for every request:
 *  - never a 5xx, and every 4xx carries a JSON body with a `WEBPP_ERR_*` (or, for a body
 *    Fastify itself refuses before webpp sees it, `FST_ERR_*`) code;
 *  - a rejected request changes nothing: directory, stored replicas, and the files under the
 *    data directory's parent (nothing is written outside the data directory either);
 *  - the server still answers afterwards.
 *
 * Bounded and reproducible: fixed seed (FUZZ_SEED overrides it), a bounded number of runs.
 */
import { readdir } from 'node:fs/promises';
import { request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import fc from 'fast-check';
import type { FastifyInstance, InjectOptions } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as Y from 'yjs';
import * as syncProtocol from 'y-protocols/sync';
import * as encoding from 'lib0/encoding';
import { CLUSTER_AUTH_HEADER, signClusterRequest } from '../src/http/auth.js';
import { ADMIN_TOKEN, CLUSTER_SECRET, ORIGIN_A, ORIGIN_B, buildApp, removeTempDirs, tempDir } from './helpers.js';

const SEED = Number(process.env.FUZZ_SEED ?? 20_261_124);
const runs = (numRuns: number) => ({ seed: SEED, numRuns, endOnFailure: true });

const R = '/.well-known/webpp/replicas';
const D = '/.well-known/webpp/directory';
const SYNC = '/.well-known/webpp/sync';
const PEER = '/.well-known/webpp/peer/replicas';

let app: FastifyInstance;
let parent: string;

beforeAll(async () => {
  parent = await tempDir('webpp-fuzz-');
  app = await buildApp({
    dataDir: join(parent, 'data'),
    clusterSecret: CLUSTER_SECRET,
    directory: { formatVersion: 1, logicalOrigin: ORIGIN_A, entries: [{ logical: '/seeded/*', servers: [ORIGIN_A, ORIGIN_B] }] },
  });
  // Some state to lose: a stored replica.
  const created = await app.inject({ method: 'POST', url: `${R}/kept.txt`, headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'text/plain' }, payload: 'kept' });
  expect(created.statusCode).toBe(201);
});

afterAll(async () => {
  await app.close();
  await removeTempDirs();
});

/** Everything a request could change: directory, stored replicas (with versions), files. */
async function snapshot(): Promise<string> {
  const files = await readdir(parent, { recursive: true });
  const replicas = app.webpp.store.list().map((replica) => [replica.path, replica.logicalUrl, replica.size, replica.version]);
  return JSON.stringify([app.webpp.directory.toJSON(), replicas, files.sort()]);
}

// ------------------------------------------------------------------ inputs

const segment = fc.oneof(
  { weight: 3, arbitrary: fc.stringMatching(/^[A-Za-z0-9_~-][A-Za-z0-9._~-]{0,11}$/) },
  fc.constantFrom('..', '.', '%2e%2e', '%2E%2E', '%2e', '.%2e', '%2f', '%5c', '\\', '%00', '', '~', 'kept.txt', 'webpp.js', '.well-known', 'seeded', 'x?y=1', 'x#f', '%', '%zz', 'é', '日本', '%C3%A9', '%ff', ';x', '*'),
  fc.string({ maxLength: 8 }),
);
const tail = fc.oneof(
  { weight: 6, arbitrary: fc.array(segment, { minLength: 1, maxLength: 6 }).map((parts) => parts.join('/')) },
  fc.integer({ min: 1, max: 12_000 }).map((n) => 'a/'.repeat(n)), // very long paths
);
const suffix = fc.constantFrom('', '?y=1', '?', '#frag', '?a=%00', '?..=..');
/** Mostly the routes themselves (so the handlers run), sometimes near misses. */
const managementUrl = fc.oneof(
  { weight: 5, arbitrary: fc.tuple(tail, suffix).map(([rest, end]) => `${R}/${rest}${end}`) },
  { weight: 1, arbitrary: suffix.map((end) => `${D}${end}`) },
  { weight: 1, arbitrary: suffix.map((end) => `${R}${end}`) },
  { weight: 1, arbitrary: fc.tuple(fc.constantFrom(`${R}`, `${D}/`, `${R}//`, '/.well-known/webpp/', `${R}/%2e%2e/`), tail, suffix).map(([prefix, rest, end]) => `${prefix}${rest}${end}`) },
);
const peerUrl = fc.oneof(
  { weight: 5, arbitrary: fc.tuple(tail, suffix).map(([rest, end]) => `${PEER}/${rest}${end}`) },
  { weight: 2, arbitrary: suffix.map((end) => `${SYNC}${end}`) },
  { weight: 1, arbitrary: fc.tuple(fc.constantFrom(`${PEER}`, `${SYNC}/`, `${PEER}//`), tail, suffix).map(([prefix, rest, end]) => `${prefix}${rest}${end}`) },
);
const method = fc.constantFrom('GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS');
/** Header values as an HTTP client can send them: visible ASCII, space, tab and obs-text. */
const headerValue = fc.stringMatching(/^[\t\x20-\x7e\x80-\xff]{0,80}$/);
const authorization = fc.oneof(
  fc.constant(undefined),
  fc.constantFrom('', 'Bearer', 'Bearer ', `Bearer ${ADMIN_TOKEN.slice(1)}`, `bearer  ${ADMIN_TOKEN}x`, `Basic ${ADMIN_TOKEN}`, `Bearer ${ADMIN_TOKEN} x`, 'Bearer \u00ff'),
  headerValue,
  headerValue.map((value) => `Bearer ${value}`),
);
const contentType = fc.oneof(fc.constant(undefined), fc.constantFrom('text/plain', 'text/html', 'image/png', 'text/plain', 'application/json', 'application/octet-stream', ';', 'multipart/form-data; boundary=x'), headerValue);
const body = fc.oneof(
  fc.constant(undefined),
  fc.uint8Array({ maxLength: 400 }).map((bytes) => Buffer.from(bytes)),
  fc.constantFrom('{}', '{"add":[{"logical":"/../x","servers":["http://evil.localhost"]}]}', '{"add":null}', '{"remove":[{}]}', 'null', '[]', '{"add":[{"logical":"/p/*","servers":[]}]}'),
  fc.json({ maxDepth: 3 }),
);

type Edit = { kind: 'flip'; at: number; to: number } | { kind: 'cut'; at: number } | { kind: 'insert'; at: number; what: number[] } | { kind: 'drop'; at: number; length: number };
const editArb: fc.Arbitrary<Edit> = fc.oneof(
  fc.record({ kind: fc.constant('flip' as const), at: fc.nat(), to: fc.nat({ max: 255 }) }),
  fc.record({ kind: fc.constant('cut' as const), at: fc.nat() }),
  fc.record({ kind: fc.constant('insert' as const), at: fc.nat(), what: fc.array(fc.nat({ max: 255 }), { minLength: 1, maxLength: 8 }) }),
  fc.record({ kind: fc.constant('drop' as const), at: fc.nat(), length: fc.integer({ min: 1, max: 20 }) }),
);

/** Byte-level mutations; positions are taken modulo the current length. */
function mutateBytes(input: Uint8Array, edits: readonly Edit[]): Uint8Array {
  const bytes = [...input];
  for (const edit of edits) {
    const at = edit.at % (bytes.length + 1);
    if (edit.kind === 'flip' && bytes.length > 0) bytes[at % bytes.length] = edit.to;
    else if (edit.kind === 'cut') bytes.length = at;
    else if (edit.kind === 'insert') bytes.splice(at, 0, ...edit.what);
    else if (edit.kind === 'drop') bytes.splice(at, edit.length);
  }
  return Uint8Array.from(bytes);
}

// ------------------------------------------------------------------ checks

/** Sends one request and checks the answer; returns the status. */
async function send(options: InjectOptions, rule: { mustChangeNothing: boolean }): Promise<number> {
  const before = await snapshot();
  const response = await app.inject(options);
  const status = response.statusCode;
  const context = `${options.method} ${JSON.stringify(options.url ?? '').slice(0, 200)} -> ${status} ${response.body.slice(0, 300)}`;
  expect(status, context).toBeLessThan(500);
  if (status >= 400 && options.method !== 'HEAD') {
    const answer = response.json<{ code?: unknown; message?: unknown }>();
    // Fastify's own "no such route" 404 (the site owns its 404s) is the one answer without a code.
    const noRoute = status === 404 && answer.code === undefined && /^Route \S+ not found$/.test(String(answer.message));
    if (!noRoute) expect(String(answer.code), context).toMatch(/^(WEBPP_ERR_|FST_ERR_)/);
  }
  if (status >= 400 || rule.mustChangeNothing) expect(await snapshot(), context).toBe(before);
  return status;
}

function headersOf(entries: Record<string, string | undefined>): Record<string, string> {
  return Object.fromEntries(Object.entries(entries).filter((entry): entry is [string, string] => entry[1] !== undefined));
}

const hasBody = (verb: string) => verb !== 'GET' && verb !== 'HEAD';

/** A URL that reaches the route under `prefix` as it is (no dot segment, escape or fragment to normalise first). */
function plainUnder(url: string, prefix: string): boolean {
  const rest = url.slice(prefix.length + 1);
  return url.startsWith(`${prefix}/`) && /^[A-Za-z0-9_~-][A-Za-z0-9._~/-]*$/.test(rest) && !/(^|\/)\.\.?(\/|$)/.test(rest);
}

describe('fuzz: management API', () => {
  it('without valid credentials: no write succeeds (401/403 on a management route), never a change', async () => {
    await fc.assert(
      fc.asyncProperty(method, managementUrl, authorization, contentType, body, async (verb, url, auth, type, payload) => {
        // HTTP trims the value's surrounding whitespace: a trailing tab still sends the right token.
        if (auth?.trim() === `Bearer ${ADMIN_TOKEN}`) return;
        const status = await send(
          { method: verb, url, headers: headersOf({ authorization: auth, 'content-type': type }), ...(hasBody(verb) && payload !== undefined ? { payload } : {}) },
          { mustChangeNothing: true },
        );
        // Reading the public directory is fine; writing anything is not.
        if (verb !== 'GET' && verb !== 'HEAD' && verb !== 'OPTIONS') expect(status).toBeGreaterThanOrEqual(400);
        // A management route checks credentials first, before it looks at the path or the body.
        if (['GET', 'POST', 'PUT', 'DELETE'].includes(verb) && plainUnder(url, R)) expect([401, 403]).toContain(status);
      }),
      runs(300),
    );
  });

  it('with valid credentials: a 2xx or a coded 4xx; a rejection changes nothing; paths stay inside', async () => {
    await fc.assert(
      fc.asyncProperty(method, managementUrl, contentType, body, async (verb, url, type, payload) => {
        await send(
          {
            method: verb,
            url,
            headers: headersOf({ authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': type }),
            ...(hasBody(verb) && payload !== undefined ? { payload } : {}),
          },
          { mustChangeNothing: false },
        );
        // Whatever was accepted, every stored replica has a canonical path under the root.
        for (const replica of app.webpp.store.list()) {
          expect(replica.path.startsWith('/')).toBe(true);
          expect(replica.path).not.toMatch(/(^|\/)\.\.?(\/|$)|%2e|\0|\\/i);
        }
      }),
      runs(200),
    );
    const listing = await app.inject({ url: R, headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
    expect(listing.statusCode).toBe(200);
  });
});

/** Sends the path byte for byte (inject() normalises URLs; a real client need not). */
function rawRequest(port: number, method: string, path: string, payload: Buffer): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const request = httpRequest(
      { host: '127.0.0.1', port, method, path, headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'text/plain', 'content-length': payload.length } },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () => resolve({ status: response.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
      },
    );
    request.on('error', reject);
    request.end(payload);
  });
}

describe('fuzz: management paths over real HTTP, unnormalised', () => {
  it('with valid credentials: never a 5xx, and nothing is stored outside the data directory or under a non-canonical path', async () => {
    await app.listen({ port: 0, host: '127.0.0.1' });
    const port = (app.server.address() as AddressInfo).port;
    const rawSegment = fc.oneof(
      fc.constantFrom('..', '.', '%2e%2e', '%2E%2e', '.%2e', '%2e.', '%2f', '%2F..', '%5c..', '\\..', '%00', '%', '%zz', '%c0%ae%c0%ae', '%ef%bc%8e', 'x#y', 'x?y=1', '~', 'a'),
      fc.stringMatching(/^[\x21-\x7e]{1,8}$/),
    );
    await fc.assert(
      fc.asyncProperty(fc.constantFrom('POST', 'PUT', 'DELETE', 'GET'), fc.array(rawSegment, { minLength: 1, maxLength: 6 }), async (verb, segments) => {
        const path = `${R}/${segments.join('/')}`;
        const before = await snapshot();
        const answer = await rawRequest(port, verb, path, Buffer.from('raw'));
        expect(answer.status, `${verb} ${path}: ${answer.body.slice(0, 200)}`).toBeLessThan(500);
        if (answer.status >= 400) {
          expect(await snapshot(), `${verb} ${path}`).toBe(before);
          const code = (JSON.parse(answer.body) as { code?: unknown; message?: unknown }).code;
          if (code !== undefined) expect(code).toEqual(expect.stringMatching(/^(WEBPP_ERR_|FST_ERR_)/));
        }
        for (const replica of app.webpp.store.list()) expect(replica.path).not.toMatch(/(^|\/)\.\.?(\/|$)|%2e|\0|\\/i);
        expect((await readdir(parent)).sort()).toEqual(['data']);
      }),
      runs(200),
    );
  });
});

describe('fuzz: peer endpoints', () => {
  const clusterAuth = fc.oneof(
    fc.constant(undefined),
    fc.constantFrom('', 'v2', 'v2 t= s=', `v2 t=${Date.now()} s=${'A'.repeat(43)}`, `v1 t=${Date.now()} s=${'A'.repeat(43)}`, `v3 t=1 s=${'A'.repeat(43)}`, `v2 t=99999999999999999 s=${'_'.repeat(43)}`, `v2 t=-1 s=${'A'.repeat(43)}`),
    // Signed right, but for another server (a replay to a peer): the target origin is signed.
    fc.constant(null).map(() => signClusterRequest(CLUSTER_SECRET, 'PUT', `${ORIGIN_B}${PEER}/seeded/a.txt`, new Uint8Array())),
    headerValue,
  );
  const replicaVersion = fc.oneof(
    { weight: 3, arbitrary: fc.integer({ min: 1, max: 1e6 }).map((n) => `${Date.now() + n}@${ORIGIN_B}`) },
    fc.constant(undefined),
    fc.constantFrom('', '1', '@', `1@${ORIGIN_B}`, `99999999999999999999@${ORIGIN_B}`, `-1@${ORIGIN_B}`, '1@not a url', `1.5@${ORIGIN_B}`, `${Date.now() + 1e6}@${ORIGIN_B}`),
    headerValue,
  );
  const logicalUrl = fc.oneof({ weight: 4, arbitrary: fc.constant(`${ORIGIN_A}/seeded/a.txt`) }, fc.constant(undefined), fc.constantFrom(`${ORIGIN_A}/kept.txt`, `${ORIGIN_A}/../x`, 'javascript:alert(1)', '/relative', `${ORIGIN_B}/kept.txt`), headerValue);

  it('unsigned or badly signed: always a 4xx (401/403 on a peer route), never a change', async () => {
    await fc.assert(
      fc.asyncProperty(method, peerUrl, clusterAuth, replicaVersion, logicalUrl, body, async (verb, url, signed, version, logical, payload) => {
        const status = await send(
          {
            method: verb,
            url,
            headers: headersOf({ [CLUSTER_AUTH_HEADER]: signed, 'webpp-replica-version': version, 'webpp-logical-url': logical, 'content-type': 'application/octet-stream' }),
            ...(hasBody(verb) && payload !== undefined ? { payload } : {}),
          },
          { mustChangeNothing: true },
        );
        expect(status).toBeGreaterThanOrEqual(400);
        if (verb === 'PUT' && plainUnder(url, PEER)) expect([401, 403]).toContain(status);
      }),
      runs(250),
    );
  });

  it('validly signed but random: sync messages and replica pushes answer 2xx or a coded 4xx, and a rejection changes nothing', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(peerUrl, fc.constant(SYNC), { weight: 3, arbitrary: fc.constant(`${PEER}/seeded/a.txt`) }),
        fc.constantFrom('POST', 'PUT'),
        replicaVersion,
        logicalUrl,
        fc.oneof(fc.uint8Array({ maxLength: 300 }), fc.constantFrom(Uint8Array.of(0, 0), Uint8Array.of(0, 1, 255, 255, 255, 255, 15), Uint8Array.of(0, 2, 200, 1, 0))),
        async (url, verb, version, logical, bytes) => {
          const payload = Buffer.from(bytes);
          await send(
            {
              method: verb,
              url,
              headers: headersOf({
                [CLUSTER_AUTH_HEADER]: signClusterRequest(CLUSTER_SECRET, verb, `${ORIGIN_A}${url}`, payload, {
                  headers: { 'webpp-replica-version': version, 'webpp-logical-url': logical, 'content-type': 'application/octet-stream' },
                }),
                'webpp-replica-version': version,
                'webpp-logical-url': logical,
                'content-type': 'application/octet-stream',
              }),
              payload,
            },
            { mustChangeNothing: false },
          );
        },
      ),
      runs(300),
    );
    const health = await app.inject({ url: '/.well-known/webpp/health' });
    expect(health.statusCode).toBeLessThan(500);
  });

  describe('sync messages from a real peer, mutated', () => {
    let peer: FastifyInstance;
    let entries = 0;
    beforeAll(async () => {
      peer = await buildApp({ publicUrl: ORIGIN_B, directory: { formatVersion: 1, logicalOrigin: ORIGIN_A, entries: [] } });
    });
    afterAll(async () => {
      await peer.close();
    });

    /** A peer's real directory update carrying an entry the server has not seen, as a y-protocols update message. */
    async function freshUpdate(): Promise<Uint8Array> {
      entries += 1;
      const added = await peer.inject({
        method: 'POST',
        url: D,
        headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
        payload: { add: [{ logical: `/from-peer-${entries}/*`, servers: [ORIGIN_B] }] },
      });
      expect(added.statusCode).toBe(200);
      const message = encoding.createEncoder();
      syncProtocol.writeUpdate(message, Y.encodeStateAsUpdate(peer.webpp.directory.doc));
      return encoding.toUint8Array(message);
    }

    const post = (bytes: Uint8Array): InjectOptions => {
      const payload = Buffer.from(bytes);
      return { method: 'POST', url: SYNC, headers: { [CLUSTER_AUTH_HEADER]: signClusterRequest(CLUSTER_SECRET, 'POST', `${ORIGIN_A}${SYNC}`, payload, { headers: { 'content-type': 'application/octet-stream' } }), 'content-type': 'application/octet-stream' }, payload };
    };

    it('a mutated update answers 200 or WEBPP_ERR_BAD_SYNC_MESSAGE, and a rejected one changes nothing', async () => {
      await fc.assert(
        fc.asyncProperty(fc.array(editArb, { minLength: 1, maxLength: 4 }), async (edits) => {
          const status = await send(post(mutateBytes(await freshUpdate(), edits)), { mustChangeNothing: false });
          expect([200, 400]).toContain(status);
        }),
        runs(120),
      );
    });

    it('a valid update followed by garbage is refused as a whole: nothing of it is applied', async () => {
      await fc.assert(
        fc.asyncProperty(fc.uint8Array({ minLength: 1, maxLength: 40 }), async (garbage) => {
          // A new entry each run, so that an update applied by an earlier run cannot hide this one.
          const input = Uint8Array.from([...(await freshUpdate()), ...garbage]);
          await send(post(input), { mustChangeNothing: false });
        }),
        runs(60),
      );
    });

    it('the unmutated update is applied (the properties above see real updates)', async () => {
      expect(await send(post(await freshUpdate()), { mustChangeNothing: false })).toBe(200);
      expect(JSON.stringify(app.webpp.directory.toJSON())).toContain(`/from-peer-${entries}/`);
    });
  });
});
