/**
 * Pages in a legacy encoding copied into the served folder: the header must not claim UTF-8
 * for them (a header charset wins over the page's <meta charset> in browsers).
 */
import { writeFile, utimes } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { startReplicaServer, type ReplicaServer } from '../src/server.js';
import { ADMIN_TOKEN, removeTempDirs, tempDir } from './helpers.js';

afterAll(removeTempDirs);
let server: ReplicaServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const latin1 = (text: string): Buffer => Buffer.from(text, 'latin1');

async function served(path: string): Promise<{ contentType: string | null; text: string }> {
  const response = await fetch(`${server!.url}${path}`);
  expect(response.status).toBe(200);
  const contentType = response.headers.get('content-type');
  const label = /charset=([^;]+)/.exec(contentType ?? '')?.[1] ?? 'utf-8';
  // What a browser shows: the bytes decoded with the header's charset.
  return { contentType, text: new TextDecoder(label).decode(await response.arrayBuffer()) };
}

describe('the charset of static HTML pages', () => {
  it('follows the page’s own declaration; UTF-8 pages and pages that declare nothing keep utf-8', async () => {
    const root = await tempDir();
    await writeFile(join(root, 'latin.html'), latin1('<!doctype html><html><head><meta charset="ISO-8859-1"><title>Café</title></head><body>Crème brûlée<img src="a.png"></body></html>'));
    await writeFile(
      join(root, 'old.htm'),
      latin1('<html><head><META HTTP-EQUIV="Content-Type" CONTENT="text/html; charset=windows-1252"></head><body>Naïve façade</body></html>'),
    );
    await writeFile(join(root, 'utf8.html'), '<!doctype html><meta charset="utf-8"><p>Café</p>');
    await writeFile(join(root, 'bom.html'), Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('<meta charset="iso-8859-1"><p>Café</p>')]));
    await writeFile(join(root, 'plain.html'), '<p>Café</p>');
    await writeFile(join(root, 'a.png'), 'PNG');
    server = await startReplicaServer({ adminToken: ADMIN_TOKEN, root, dataDir: await tempDir() });

    const latin = await served('/latin.html');
    expect(latin.contentType).toBe('text/html; charset=iso-8859-1'); // was "text/html; charset=utf-8": "Caf�"
    expect(latin.text).toContain('<title>Café</title>');
    expect(latin.text).toContain('Crème brûlée');
    expect(latin.text).toContain('<script src="/webpp.js" async></script>'); // the tag is still injected, the bytes kept

    const old = await served('/old.htm');
    expect(old.contentType).toBe('text/html; charset=windows-1252');
    expect(old.text).toContain('Naïve façade');

    for (const path of ['/utf8.html', '/bom.html', '/plain.html']) {
      const page = await served(path);
      expect({ path, contentType: page.contentType }).toEqual({ path, contentType: 'text/html; charset=utf-8' });
      expect(page.text).toContain('Café');
    }
  });

  it('reads a page again when it changes', async () => {
    const root = await tempDir();
    const file = join(root, 'index.html');
    await writeFile(file, latin1('<meta charset="iso-8859-1"><p>Café</p>'));
    server = await startReplicaServer({ adminToken: ADMIN_TOKEN, root, dataDir: await tempDir() });
    expect((await served('/index.html')).contentType).toBe('text/html; charset=iso-8859-1');
    await writeFile(file, '<meta charset="utf-8"><p>Café, now in UTF-8</p>');
    const later = new Date(Date.now() + 5_000);
    await utimes(file, later, later);
    const page = await served('/index.html');
    expect(page.contentType).toBe('text/html; charset=utf-8');
    expect(page.text).toContain('Café, now in UTF-8');
  });
});
