/**
 * Inputs an operator sends the way the docs show (curl against a running server), found
 * wrong by using the product: each answer is a 4xx with a WEBPP_ERR_* code that changes
 * nothing, or the change the operator meant. Real servers on loopback, real HTTP.
 */
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { startReplicaServer, type ReplicaServer } from '../src/server.js';
import { ADMIN_TOKEN, auth, removeTempDirs } from './helpers.js';

const R = '/.well-known/webpp/replicas';
let server: ReplicaServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});
afterAll(removeTempDirs);

async function listing(base: string): Promise<string> {
  const [directory, replicas] = await Promise.all([
    fetch(`${base}/.well-known/webpp/directory`).then(async (response) => response.text()),
    fetch(`${base}${R}`, { headers: auth }).then(async (response) => response.text()),
  ]);
  return `${directory}\n${replicas}`;
}

describe('replica paths with non-ASCII characters', () => {
  it('refuses lower-case percent escapes (what curl sends for a typed "é"): browsers ask for upper case', async () => {
    server = await startReplicaServer({ adminToken: ADMIN_TOKEN, injectScript: false });
    const before = await listing(server.url);
    // `curl -X POST …/replicas/café.txt` sends "/caf%c3%a9.txt"; Chromium requests "/caf%C3%A9.txt".
    const lower = await fetch(`${server.url}${R}/caf%c3%a9.txt`, { method: 'POST', headers: { ...auth, 'content-type': 'text/plain' }, body: 'bonjour' });
    const answer = (await lower.json()) as { code?: string; message?: string };
    expect([lower.status, answer.code]).toEqual([400, 'WEBPP_ERR_BAD_PATH']);
    expect(answer.message).toContain('/caf%C3%A9.txt');
    expect(await listing(server.url)).toBe(before);

    // The canonical form, as the error names it, is stored and served at the URL a browser asks for.
    const upper = await fetch(`${server.url}${R}/caf%C3%A9.txt`, { method: 'POST', headers: { ...auth, 'content-type': 'text/plain' }, body: 'bonjour' });
    expect(upper.status).toBe(201);
    const served = await fetch(new URL('/café.txt', server.url));
    expect([served.status, await served.text()]).toEqual([200, 'bonjour']);
  });
});

describe('directory edits', () => {
  it('refuses a "servers" entry with a path instead of placing the replica at the root of that host', async () => {
    server = await startReplicaServer({ adminToken: ADMIN_TOKEN, injectScript: false });
    const before = await listing(server.url);
    const edit = async (servers: string[]): Promise<Response> =>
      fetch(`${server?.url}/.well-known/webpp/directory`, {
        method: 'POST',
        headers: { ...auth, 'content-type': 'application/json' },
        body: JSON.stringify({ add: [{ logical: '/guide/*', servers }] }),
      });
    for (const servers of [['http://mirror.localhost:9/webpp'], ['http://mirror.localhost:9/?v=1']]) {
      const response = await edit(servers);
      const answer = (await response.json()) as { code?: string; message?: string };
      expect({ servers, status: response.status, code: answer.code }).toEqual({ servers, status: 400, code: 'WEBPP_ERR_BAD_BODY' });
      expect(answer.message).toContain('"physical"');
    }
    expect(await listing(server.url)).toBe(before);
    // An origin, with or without its trailing slash, is what "servers" takes.
    expect((await edit(['http://mirror.localhost:9/'])).status).toBe(200);
    const resolved = (await (await fetch(`${server.url}/.well-known/webpp/resolve?url=/guide/a.html`)).json()) as { physicalUrls: string[] };
    expect(resolved.physicalUrls).toEqual(['http://mirror.localhost:9/guide/a.html']);
  });
});
