/**
 * Content digests with the memory cache (issue 25 §2), on three real servers sharing one
 * site folder, as `webpp-origin --content-digests --memory-cache-bytes 16777216` runs them:
 * after a file is edited on disk, each server's bindings header and the bytes it serves for
 * that file come from the same version — a copy held in memory is never served under the
 * edited file's digest (the worker would take every replica for corrupt and fall back).
 */
import { createHash } from 'node:crypto';
import { appendFile, mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { startReplicaServer, type ReplicaServer } from '../src/server.js';
import { bindingsOf, removeTempDirs, tempDir, TRIO, trioAddresses, trioMember } from './helpers.js';

const servers: ReplicaServer[] = [];

afterAll(async () => {
  await Promise.all(servers.map((server) => server.close()));
  await removeTempDirs();
});

function sri(content: string | Buffer): string {
  return `sha256-${createHash('sha256').update(content).digest('base64')}`;
}

describe('content digests with the memory cache, three servers over one folder', () => {
  it('serves the bytes of the digest it announces, from the moment a file is edited (issue 25 §2)', async () => {
    const root = await tempDir();
    await mkdir(join(root, 'css'), { recursive: true });
    await writeFile(join(root, 'index.html'), '<!doctype html><link rel="stylesheet" href="/css/docs.css"><p>docs</p>');
    const original = `body { color: #333 }\n${'.rule { margin: 0 }\n'.repeat(200)}`;
    await writeFile(join(root, 'css', 'docs.css'), original);
    const { ports, urls } = await trioAddresses();
    for (const name of TRIO) {
      servers.push(
        await startReplicaServer({
          ...trioMember(name, ports, urls),
          root,
          injectScript: false,
          contentDigests: true,
          memoryCacheBytes: 16 * 1024 * 1024,
          peerPingIntervalMs: 60_000,
          directory: { formatVersion: 1, entries: [{ logical: '/*', servers: TRIO.map((other) => urls[other]) }] },
        }),
      );
    }
    const logical = `${urls.a}/css/docs.css`;
    const local = (name: (typeof TRIO)[number], path: string): string => `http://127.0.0.1:${ports[name]}${path}`;
    const announced = async (name: (typeof TRIO)[number]): Promise<string | undefined> => {
      const page = await fetch(local(name, '/index.html'));
      await page.arrayBuffer();
      return bindingsOf(page.headers.get('webpp-bindings') ?? undefined)?.digests?.find((digest) => digest.logical === logical)?.integrity;
    };
    const served = async (name: (typeof TRIO)[number]): Promise<string> => sri(Buffer.from(await (await fetch(local(name, '/css/docs.css'))).arrayBuffer()));

    // Each server has the file in memory (asked twice) and announces its digest.
    for (const name of TRIO) {
      expect(await served(name)).toBe(sri(original));
      expect(await served(name)).toBe(sri(original));
      expect(await announced(name)).toBe(sri(original));
    }
    const edited = `${original}/* edited */\n`;
    await appendFile(join(root, 'css', 'docs.css'), '/* edited */\n');

    // Until every server announces the new digest (bounded: 100 rounds), a server that
    // announces the new digest serves the new bytes, never the copy it held in memory. (The
    // other way round — the old digest on a page, then the new bytes read from disk — is an
    // edit landing between two requests, as without a cache.)
    const mismatches: string[] = [];
    let allNew = false;
    for (let round = 0; round < 100 && !allNew; round += 1) {
      allNew = true;
      for (const name of TRIO) {
        const digest = await announced(name);
        const body = await served(name);
        if (digest === sri(edited) && body !== digest) mismatches.push(`${name}: announced ${digest === sri(edited) ? 'new' : 'old'}, served ${body === sri(edited) ? 'new' : 'old'}`);
        if (digest !== sri(edited) || body !== sri(edited)) allNew = false;
      }
      if (!allNew) await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(mismatches).toEqual([]);
    expect(allNew).toBe(true);
  });
});
