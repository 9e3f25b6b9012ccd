/**
 * Issue 10 §2: a captured peer push must not be replayable. Four real servers on loopback
 * (a, b, c share one logical origin and sync their directories; d is a bystander with the
 * same cluster secret), each behind a recording proxy that is its public URL, so every
 * server-to-server request is captured on the wire as an eavesdropper would see it, then
 * sent again unchanged:
 * - after an admin DELETE (also once the directory lists the server again, and after a
 *   restart): refused by the tombstone, nothing stored or served;
 * - to a server that never held the replica: refused by the signature (made for another
 *   origin), nothing stored or served;
 * - a push correctly signed for a server the directory does not list: refused;
 * and the legitimate flow (POST → PUT propagation → DELETE → POST again) still works.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as Y from 'yjs';
import * as syncProtocol from 'y-protocols/sync';
import * as encoding from 'lib0/encoding';
import { startReplicaServer, type ReplicaServer } from '../src/server.js';
import { signClusterRequest } from '../src/http/auth.js';
import { LOGICAL_URL_HEADER, PEER_REPLICAS_PATH } from '../src/replicas/replica-protocol.js';
import { compareVersions, parseVersion, REPLICA_VERSION_HEADER } from '../src/replicas/replica-version.js';
import { clusterRequest } from '../src/sync/cluster-client.js';
import { SYNC_PATH } from '../src/sync/peer-sync.js';
import { ADMIN_TOKEN, CLUSTER_SECRET, auth, removeTempDirs, tempDir, waitFor } from './helpers.js';
import { RecordingProxy, replay, type RecordedRequest } from './fixtures/recording-proxy.js';

const NAMES = ['a', 'b', 'c', 'd'] as const;
type Name = (typeof NAMES)[number];

interface Node {
  name: Name;
  dataDir: string;
  proxy: RecordingProxy;
  /** Public URL: the recording proxy, under the node's own *.localhost name. */
  url: string;
  server: ReplicaServer;
}

const nodes = {} as Record<Name, Node>;

async function start(name: Name, dataDir: string, proxy: RecordingProxy): Promise<ReplicaServer> {
  const url = `http://${name}.localhost:${proxy.port}`;
  const clustered = name === 'd' ? [] : (['a', 'b', 'c'] as const).filter((other) => other !== name);
  const server = await startReplicaServer({
    publicUrl: url,
    logicalOrigin: `http://a.localhost:${nodes.a?.proxy.port ?? proxy.port}`,
    dataDir,
    adminToken: ADMIN_TOKEN,
    clusterSecret: CLUSTER_SECRET,
    peers: clustered.map((other) => nodes[other]?.url ?? ''),
    syncIntervalMs: 200,
    peerTimeoutMs: 2000,
    injectScript: false,
  });
  proxy.retarget(server.port);
  return server;
}

beforeAll(async () => {
  for (const name of NAMES) {
    const proxy = new RecordingProxy(1);
    await proxy.listen();
    nodes[name] = { name, dataDir: await tempDir(`webpp-replay-${name}-`), proxy, url: `http://${name}.localhost:${proxy.port}`, server: undefined as never };
  }
  for (const name of NAMES) nodes[name].server = await start(name, nodes[name].dataDir, nodes[name].proxy);
}, 30_000);

afterAll(async () => {
  for (const node of Object.values(nodes)) {
    await node.server?.close();
    await node.proxy.close();
  }
  await removeTempDirs();
});

const logicalOf = (path: string): string => `${nodes.a.url}${path}`;

async function admin(name: Name, method: string, path: string, body?: string): Promise<{ status: number; json: Record<string, unknown> }> {
  const response = await fetch(`http://127.0.0.1:${nodes[name].server.port}/.well-known/webpp/replicas${path}`, {
    method,
    headers: { ...auth, 'content-type': 'text/plain' },
    body,
  });
  return { status: response.status, json: (await response.json()) as Record<string, unknown> };
}

async function editDirectory(name: Name, change: 'add' | 'remove', path: string, server: Name): Promise<void> {
  const response = await fetch(`http://127.0.0.1:${nodes[name].server.port}/.well-known/webpp/directory`, {
    method: 'POST',
    headers: { ...auth, 'content-type': 'application/json' },
    body: JSON.stringify({ [change]: [{ logical: path, physical: [`${nodes[server].url}${path}`] }] }),
  });
  expect(response.status).toBe(200);
}

/** What a browser gets for `path` from the server itself. */
async function served(name: Name, path: string): Promise<{ status: number; text: string }> {
  const response = await fetch(`http://127.0.0.1:${nodes[name].server.port}${path}`);
  return { status: response.status, text: await response.text() };
}

function codeOf(answer: { body: string }): string | undefined {
  return (JSON.parse(answer.body) as { code?: string }).code;
}

/** The one push of `path` recorded on the way to `name`, newest first. */
function capturedPush(name: Name, path: string): RecordedRequest {
  const pushes = nodes[name].proxy.requestsTo('PUT', `${PEER_REPLICAS_PATH}${path}`);
  expect(pushes.length).toBeGreaterThan(0);
  return pushes[pushes.length - 1] as RecordedRequest;
}

async function listedEverywhere(path: string, holders: Name[]): Promise<void> {
  const expected = holders.map((name) => `${nodes[name].url}${path}`).sort();
  for (const name of ['a', 'b', 'c'] as const) {
    await waitFor(`${name} to list ${holders.join(', ')} for ${path}`, () => {
      const listed = [...(nodes[name].server.app.webpp.directory.lookup(logicalOf(path))?.physicalUrls ?? [])].sort();
      return JSON.stringify(listed) === JSON.stringify(expected);
    });
  }
}

async function restart(name: Name): Promise<void> {
  await nodes[name].server.close();
  nodes[name].server = await start(name, nodes[name].dataDir, nodes[name].proxy);
}

describe('replays of captured peer pushes', () => {
  it('a push replayed after an admin DELETE is refused (tombstone), also once listed again and after a restart', async () => {
    for (const name of ['a', 'b', 'c'] as const) expect((await admin(name, 'POST', '/doc.txt', 'v1')).status).toBe(201);
    await listedEverywhere('/doc.txt', ['a', 'b', 'c']);
    const put = await admin('a', 'PUT', '/doc.txt', 'v2 secret draft');
    expect(put.status).toBe(200);
    expect((put.json.pushes as { ok: boolean }[]).map((push) => push.ok)).toEqual([true, true]);
    expect(await served('c', '/doc.txt')).toEqual({ status: 200, text: 'v2 secret draft' });
    const captured = capturedPush('c', '/doc.txt');
    // The capture is a genuine signed push: before the DELETE, c accepts its signature (409: it already has it).
    const before = await replay(captured, nodes.c.server.port);
    expect([before.status, codeOf(before)]).toEqual([409, 'WEBPP_ERR_STALE_VERSION']);

    expect((await admin('c', 'DELETE', '/doc.txt')).status).toBe(200);
    expect((await served('c', '/doc.txt')).status).toBe(404);
    const afterDelete = await replay(captured, nodes.c.server.port);
    expect([afterDelete.status, codeOf(afterDelete)]).toEqual([409, 'WEBPP_ERR_STALE_VERSION']);
    expect((await served('c', '/doc.txt')).status).toBe(404);
    expect(nodes.c.server.app.webpp.store.get('/doc.txt')).toBeUndefined();

    // The directory lists c again (an admin's edit), without content: only the tombstone stands in the way.
    await editDirectory('c', 'add', '/doc.txt', 'c');
    const listedAgain = await replay(captured, nodes.c.server.port);
    expect([listedAgain.status, codeOf(listedAgain)]).toEqual([409, 'WEBPP_ERR_STALE_VERSION']);
    expect((await served('c', '/doc.txt')).status).toBe(404);

    // The unsigned-looking headers are signed too: a replay with its version pushed past the
    // tombstone, or with another content type, does not verify.
    for (const edited of [
      { [REPLICA_VERSION_HEADER]: `9999999999999@${nodes.a.url}` },
      { 'content-type': 'text/html' },
      { [LOGICAL_URL_HEADER]: logicalOf('/other.txt') },
    ]) {
      const tampered = await replay({ ...captured, headers: { ...captured.headers, ...edited } }, nodes.c.server.port);
      expect([tampered.status, codeOf(tampered)]).toEqual([403, 'WEBPP_ERR_FORBIDDEN']);
    }
    expect((await served('c', '/doc.txt')).status).toBe(404);

    // Tombstones survive a restart.
    await restart('c');
    const afterRestart = await replay(captured, nodes.c.server.port);
    expect([afterRestart.status, codeOf(afterRestart)]).toEqual([409, 'WEBPP_ERR_STALE_VERSION']);
    expect((await served('c', '/doc.txt')).status).toBe(404);
    expect(nodes.c.server.app.webpp.store.get('/doc.txt')).toBeUndefined();

    // The legitimate flow goes on: POST again on c (newer than the tombstone), PUT propagates, DELETE, replay refused.
    const again = await admin('c', 'POST', '/doc.txt', 'v3');
    expect(again.status).toBe(201);
    const tombstoned = parseVersion(captured.headers[REPLICA_VERSION_HEADER] as string);
    expect(compareVersions(parseVersion(again.json.version as string) as never, tombstoned as never)).toBe(1);
    expect(await served('c', '/doc.txt')).toEqual({ status: 200, text: 'v3' });
    const update = await admin('a', 'PUT', '/doc.txt', 'v4');
    expect((update.json.pushes as { physicalUrl: string; ok: boolean }[]).every((push) => push.ok)).toBe(true);
    for (const name of ['a', 'b', 'c'] as const) expect(await served(name, '/doc.txt')).toEqual({ status: 200, text: 'v4' });
    const v4Push = capturedPush('c', '/doc.txt');
    expect((await admin('c', 'DELETE', '/doc.txt')).status).toBe(200);
    const v4Replay = await replay(v4Push, nodes.c.server.port);
    expect([v4Replay.status, codeOf(v4Replay)]).toEqual([409, 'WEBPP_ERR_STALE_VERSION']);
    expect((await served('c', '/doc.txt')).status).toBe(404);
  }, 60_000);

  it('a push replayed to a server that never held the replica is refused by its signature (made for another origin)', async () => {
    for (const name of ['a', 'b'] as const) expect((await admin(name, 'POST', '/two.txt', 'one')).status).toBe(201);
    await listedEverywhere('/two.txt', ['a', 'b']);
    expect((await admin('a', 'PUT', '/two.txt', 'two, for b only')).status).toBe(200);
    const captured = capturedPush('b', '/two.txt');
    // To c and d, which never held /two.txt; to d also once its directory lists it (only the signature stands in the way).
    for (const target of ['c', 'd'] as const) {
      const answer = await replay(captured, nodes[target].server.port);
      expect([target, answer.status, codeOf(answer)]).toEqual([target, 403, 'WEBPP_ERR_FORBIDDEN']);
      expect((await served(target, '/two.txt')).status).toBe(404);
      expect(nodes[target].server.app.webpp.store.get('/two.txt')).toBeUndefined();
    }
    await editDirectory('d', 'add', '/two.txt', 'd');
    const listed = await replay(captured, nodes.d.server.port);
    expect([listed.status, codeOf(listed)]).toEqual([403, 'WEBPP_ERR_FORBIDDEN']);
    expect((await served('d', '/two.txt')).status).toBe(404);
    // To a, which holds an older version: refused by the signature as well.
    const toA = await replay(captured, nodes.a.server.port);
    expect(toA.status).toBe(403);
  }, 60_000);

  it('a push signed for a server the directory does not list is refused; once listed, the same push is accepted', async () => {
    const path = '/three.txt';
    const body = Buffer.from('pushed to d');
    const signedForD = (): Record<string, string> => {
      const headers = { 'content-type': 'text/plain', [REPLICA_VERSION_HEADER]: `${Date.now()}@${nodes.a.url}`, [LOGICAL_URL_HEADER]: logicalOf(path) };
      return { ...headers, 'webpp-cluster-auth': signClusterRequest(CLUSTER_SECRET, 'PUT', `${nodes.d.url}${PEER_REPLICAS_PATH}${path}`, body, { headers }) };
    };
    const push = (headers: Record<string, string>) => clusterlessPut(nodes.d.server.port, `${PEER_REPLICAS_PATH}${path}`, headers, body);
    const refused = await push(signedForD());
    expect([refused.status, codeOf(refused)]).toEqual([409, 'WEBPP_ERR_NOT_A_REPLICA']);
    expect((await served('d', path)).status).toBe(404);
    expect(nodes.d.server.app.webpp.store.get(path)).toBeUndefined();
    await editDirectory('d', 'add', path, 'd');
    const accepted = await push(signedForD());
    expect(accepted.status).toBe(200);
    expect(await served('d', path)).toEqual({ status: 200, text: 'pushed to d' });
  }, 30_000);

  it('a signature made for one origin is refused by another, on the push and the sync endpoints; v1 signatures are refused', async () => {
    const encoder = encoding.createEncoder();
    syncProtocol.writeSyncStep1(encoder, new Y.Doc()); // "what do you have?" from an empty document
    const hello = encoding.toUint8Array(encoder);
    // Addressed to c's public URL (through its proxy): accepted.
    const toC = await clusterRequest(CLUSTER_SECRET, `${nodes.c.url}${SYNC_PATH}`, { method: 'POST', body: hello, timeoutMs: 5000 });
    expect(toC.status).toBe(200);
    const recorded = nodes.c.proxy.requestsTo('POST', SYNC_PATH).at(-1) as RecordedRequest;
    for (const target of ['a', 'b', 'd'] as const) expect((await replay(recorded, nodes[target].server.port)).status).toBe(403);
    // The address the tests reach c at is not c's public origin: a signature made for it is refused.
    const byPort = await clusterRequest(CLUSTER_SECRET, `http://127.0.0.1:${nodes.c.server.port}${SYNC_PATH}`, { method: 'POST', body: hello, timeoutMs: 5000 });
    expect(byPort.status).toBe(403);
    const v1 = await clusterlessPut(nodes.c.server.port, `${PEER_REPLICAS_PATH}/doc.txt`, { 'webpp-cluster-auth': `v1 t=${Date.now()} s=${'A'.repeat(43)}` }, Buffer.from('x'));
    expect([v1.status, codeOf(v1)]).toEqual([401, 'WEBPP_ERR_UNAUTHORIZED']);
    expect(v1.body).toContain('v1 is no longer accepted');
  }, 30_000);

  it('a push to a server whose directory does not list it yet is retried, and lands once it does', async () => {
    const path = '/lag.txt';
    expect((await admin('a', 'POST', path, 'lag v1')).status).toBe(201);
    // a's directory lists d, but d (no peers) does not know yet.
    await editDirectory('a', 'add', path, 'd');
    const put = await admin('a', 'PUT', path, 'lag v2');
    const toD = (put.json.pushes as { physicalUrl: string; status: number; ok: boolean }[]).find((push) => push.physicalUrl.startsWith(nodes.d.url));
    expect(toD).toMatchObject({ status: 409, ok: false });
    expect(nodes.a.server.app.webpp.replicas.pendingPushes).toBeGreaterThan(0);
    await editDirectory('d', 'add', path, 'd');
    await nodes.a.server.app.webpp.syncNow();
    expect(await served('d', path)).toEqual({ status: 200, text: 'lag v2' });
    expect(nodes.a.server.app.webpp.replicas.pendingPushes).toBe(0);
  }, 30_000);

  it('a pending push to a server the directory no longer lists is dropped, not retried', async () => {
    const path = '/dropped.txt';
    expect((await admin('a', 'POST', path, 'dropped v1')).status).toBe(201);
    await editDirectory('a', 'add', path, 'd');
    expect((await admin('a', 'PUT', path, 'dropped v2')).status).toBe(200);
    expect(nodes.a.server.app.webpp.replicas.pendingPushes).toBe(1);
    // The admin takes d out again; d would now accept the push, but a no longer sends it.
    await editDirectory('a', 'remove', path, 'd');
    await editDirectory('d', 'add', path, 'd');
    const pushesBefore = nodes.d.proxy.requestsTo('PUT', `${PEER_REPLICAS_PATH}${path}`).length;
    await nodes.a.server.app.webpp.syncNow();
    expect(nodes.a.server.app.webpp.replicas.pendingPushes).toBe(0);
    expect(nodes.d.proxy.requestsTo('PUT', `${PEER_REPLICAS_PATH}${path}`).length).toBe(pushesBefore);
    expect((await served('d', path)).status).toBe(404);
  }, 30_000);
});

async function clusterlessPut(port: number, url: string, headers: Record<string, string>, body: Buffer): Promise<{ status: number; body: string }> {
  return replay({ method: 'PUT', url, headers: { ...headers, 'content-length': String(body.byteLength) }, body }, port);
}
