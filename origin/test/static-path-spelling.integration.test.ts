/**
 * `webpp-origin ./site` over a folder whose file names hold reserved characters (issue 25
 * §5): every spelling a browser or a plain static server accepts is served — `/img/b%402x.jpg`
 * and `/img/b@2x.jpg` alike — with and without the memory cache, and no spelling reaches a
 * file outside the root. Raw HTTP requests (fetch() would normalise the dot segments away).
 */
import { request as httpRequest } from 'node:http';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { startReplicaServer, type ReplicaServer } from '../src/server.js';
import { removeTempDirs, tempDir } from './helpers.js';

const servers: ReplicaServer[] = [];

afterAll(async () => {
  await Promise.all(servers.map((server) => server.close()));
  await removeTempDirs();
});

/** A folder `site/` to serve, and next to it a file that must never be served. */
async function startOverSite(options: Record<string, unknown>): Promise<ReplicaServer> {
  const parent = await tempDir();
  const root = join(parent, 'site');
  for (const [path, text] of Object.entries({
    'index.html': '<p>home</p>',
    'img/b@2x.jpg': 'b-at-2x',
    'img/c,comma.jpg': 'c-comma',
    'img/a+b.css': 'a-plus-b',
    'img/x=1;y$&:.txt': 'many',
    'img/s p.txt': 'space',
  })) {
    await mkdir(join(root, path, '..'), { recursive: true });
    await writeFile(join(root, path), text);
  }
  await writeFile(join(parent, 'secret.txt'), 'SECRET-OUTSIDE-ROOT');
  const server = await startReplicaServer({ root, port: 0, injectScript: false, ...options });
  servers.push(server);
  return server;
}

/** GET `path` exactly as written (no client-side normalisation). */
function rawGet(server: ReplicaServer, path: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const outgoing = httpRequest({ host: '127.0.0.1', port: server.port, path, method: 'GET' }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
    });
    outgoing.on('error', reject);
    outgoing.end();
  });
}

const SPELLINGS: [path: string, body: string][] = [
  ['/img/b%402x.jpg', 'b-at-2x'],
  ['/img/b@2x.jpg', 'b-at-2x'],
  ['/img/c%2Ccomma.jpg', 'c-comma'],
  ['/img/c%2ccomma.jpg', 'c-comma'],
  ['/img/c,comma.jpg', 'c-comma'],
  ['/img/a%2Bb.css', 'a-plus-b'],
  ['/img/a+b.css', 'a-plus-b'],
  ['/img/a%2Bb.css?v=1%2B2', 'a-plus-b'],
  ['/img/x%3D1%3By%24%26%3A.txt', 'many'],
  ['/img/x=1;y$&:.txt', 'many'],
  ['/img/s%20p.txt', 'space'],
];

const ESCAPES = [
  '/../secret.txt',
  '/%2e%2e/secret.txt',
  '/%2E%2E/secret.txt',
  '/img/%2e%2e/%2e%2e/secret.txt',
  '/img/..%2F..%2Fsecret.txt',
  '/img%2F..%2F..%2Fsecret.txt',
  '/..%2fsecret.txt',
  '/%2e%2e%2fsecret.txt',
  '/..%5csecret.txt',
  '/..\\secret.txt',
  '/%252e%252e/secret.txt',
  '/%40/../../secret.txt',
  '/%40%2F..%2F..%2Fsecret.txt',
  '/%3A/%2e%2e/%2e%2e/secret.txt',
  '/img/b%402x.jpg%00',
  '/%2e%2e%40/secret.txt',
];

describe.each([
  ['without the memory cache', {}],
  ['with the memory cache', { memoryCacheBytes: 1 << 20 }],
])('a folder with reserved characters in file names, %s', (_name, options) => {
  it('serves every spelling of each name, twice (issue 25 §5)', async () => {
    const server = await startOverSite(options);
    for (let round = 0; round < 2; round += 1) {
      for (const [path, body] of SPELLINGS) expect(await rawGet(server, path), path).toEqual({ status: 200, body });
    }
  });

  it('serves nothing outside the root, however it is spelled', async () => {
    const server = await startOverSite(options);
    for (const path of ESCAPES) {
      const { status, body } = await rawGet(server, path);
      expect(body, path).not.toContain('SECRET-OUTSIDE-ROOT');
      expect(status, path).toBeGreaterThanOrEqual(400);
    }
  });
});
