/**
 * `webpp-origin ./site` over a folder that also holds what is not meant for visitors: a
 * site kept in its own repository has `.git/`, and often an `.env`. Real server on loopback.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { startReplicaServer, type ReplicaServer } from '../src/server.js';
import { removeTempDirs, tempDir } from './helpers.js';

let server: ReplicaServer;

beforeAll(async () => {
  const root = await tempDir();
  for (const [path, text] of Object.entries({
    'index.html': '<p>home</p>',
    '.env': 'DB_PASSWORD=hunter2',
    '.git/config': '[remote "origin"]',
    'img/.DS_Store': 'x',
    '.well-known/security.txt': 'Contact: mailto:security@example.org',
  })) {
    await mkdir(join(root, path, '..'), { recursive: true });
    await writeFile(join(root, path), text);
  }
  server = await startReplicaServer({ root, dataDir: await tempDir() });
});

afterAll(async () => {
  await server?.close();
  await removeTempDirs();
});

const get = (path: string) => fetch(`http://127.0.0.1:${server.port}${path}`);

describe('serving a folder: dotfiles are not published', () => {
  it.each(['/.env', '/.git/config', '/img/.DS_Store', '/%2Eenv', '/.git/'])('answers %s with 404', async (path) => {
    const response = await get(path);
    expect(response.status).toBe(404);
    expect(await response.text()).not.toMatch(/hunter2|remote/);
  });

  it('serves /.well-known files and the site itself', async () => {
    expect(await (await get('/.well-known/security.txt')).text()).toBe('Contact: mailto:security@example.org');
    expect(await (await get('/')).text()).toContain('<p>home</p>');
  });
});
