import { afterAll, describe, expect, it } from 'vitest';
import { readFile, writeFile, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import * as Y from 'yjs';
import { ReplicationDirectory } from '../src/directory/replication-directory.js';
import { DirectoryStore, decodeDirectoryFile, encodeDirectoryFile } from '../src/directory/directory-store.js';
import { directoryPairsFrom, readDirectoryFile } from '../src/directory/directory-file.js';
import { applySeed } from '../src/directory/seed.js';
import { prefixCandidates } from '@webpp/core';
import { removeTempDirs, tempDir } from './helpers.js';

afterAll(removeTempDirs);

const A = 'http://a.localhost:8081';
const B = 'http://b.localhost:8082';
const C = 'http://c.localhost:8083';

/** Two-way merge through state vectors, as anti-entropy does. */
function exchange(x: Y.Doc, y: Y.Doc): void {
  Y.applyUpdate(y, Y.encodeStateAsUpdate(x, Y.encodeStateVector(y)), 'remote');
  Y.applyUpdate(x, Y.encodeStateAsUpdate(y, Y.encodeStateVector(x)), 'remote');
}

describe('ReplicationDirectory lookups', () => {
  it('resolves an exact entry to its physical URLs, the primary copy first', () => {
    const directory = new ReplicationDirectory();
    directory.addReplica(`${A}/misc/file.txt`, `${B}/files/miscFile.txt`);
    directory.addReplica(`${A}/misc/file.txt`, `${A}/misc/file.txt`);
    const match = directory.lookup(`${A}/misc/file.txt`);
    expect(match?.physicalUrls).toEqual([`${A}/misc/file.txt`, `${B}/files/miscFile.txt`]);
    expect(match?.binding).toEqual({ logical: `${A}/misc/file.txt`, prefix: false, replicas: match?.physicalUrls });
    expect(directory.lookup(`${A}/misc/other.txt`)).toBeUndefined();
  });

  it('expands prefix entries and prefers the longest matching prefix', () => {
    const directory = new ReplicationDirectory();
    directory.addReplica(`${A}/images/*`, `${B}/img/*`);
    directory.addReplica(`${A}/images/large/*`, `${C}/big/*`);
    expect(directory.lookup(`${A}/images/cat.jpg`)?.physicalUrls).toEqual([`${B}/img/cat.jpg`]);
    expect(directory.lookup(`${A}/images/large/x/y.png`)?.physicalUrls).toEqual([`${C}/big/x/y.png`]);
    expect(directory.lookup(`${A}/images/large/x/y.png`)?.binding).toMatchObject({ logical: `${A}/images/large/`, prefix: true });
    expect(directory.lookup(`${A}/imagesX/cat.jpg`)).toBeUndefined();
  });

  it('prefers an exact entry over any prefix', () => {
    const directory = new ReplicationDirectory();
    directory.addReplica(`${A}/images/*`, `${B}/images/*`);
    directory.addReplica(`${A}/images/logo.svg`, `${C}/logo.svg`);
    expect(directory.lookup(`${A}/images/logo.svg`)?.physicalUrls).toEqual([`${C}/logo.svg`]);
  });

  it('carries a query over when only the URL without it is listed', () => {
    const directory = new ReplicationDirectory();
    directory.addReplica(`${A}/app.js`, `${B}/app.js`);
    directory.addReplica(`${A}/lib/*`, `${B}/lib/*`);
    expect(directory.lookup(`${A}/app.js?v=3`)?.physicalUrls).toEqual([`${B}/app.js?v=3`]);
    expect(directory.lookup(`${A}/lib/x.js?v=3`)?.physicalUrls).toEqual([`${B}/lib/x.js?v=3`]);
  });

  it('maps physical URLs back to their logical URL (exact, query, prefix)', () => {
    const directory = new ReplicationDirectory();
    directory.addReplica(`${A}/page.html`, `${B}/mirror/page.html`);
    directory.addReplica(`${A}/images/*`, `${C}/img/*`);
    expect(directory.logicalOf(`${B}/mirror/page.html`)).toBe(`${A}/page.html`);
    expect(directory.logicalOf(`${B}/mirror/page.html?x=1`)).toBe(`${A}/page.html?x=1`);
    expect(directory.logicalOf(`${C}/img/a/b.png`)).toBe(`${A}/images/a/b.png`);
    expect(directory.logicalOf(`${B}/unknown`)).toBeUndefined();
  });

  it('lists prefix candidates longest first, ignoring the query', () => {
    expect([...prefixCandidates('http://a/x/y/z.jpg?q=/w/')]).toEqual(['http://a/x/y/', 'http://a/x/', 'http://a/']);
  });

  it('rejects invalid URLs and mixed prefix/exact pairs', () => {
    const directory = new ReplicationDirectory();
    expect(() => directory.addReplica('/relative', `${B}/x`)).toThrow(TypeError);
    expect(() => directory.addReplica(`${A}/images/*`, `${B}/x.png`)).toThrow(/prefix/);
    expect(() => directory.addReplica('ftp://a/x', `${B}/x`)).toThrow(TypeError);
    expect(directory.size).toBe(0);
  });

  it('removes entries and forgets empty ones', () => {
    const directory = new ReplicationDirectory();
    directory.addReplica(`${A}/x`, `${B}/x`);
    expect(directory.removeReplica(`${A}/x`, `${B}/x`)).toBe(true);
    expect(directory.removeReplica(`${A}/x`, `${B}/x`)).toBe(false);
    expect(directory.lookup(`${A}/x`)).toBeUndefined();
    expect(directory.logicalOf(`${B}/x`)).toBeUndefined();
    expect(directory.entries()).toEqual([]);
  });
});

describe('ReplicationDirectory versions and convergence', () => {
  it('raises the version on every addition and every removal', () => {
    const directory = new ReplicationDirectory();
    const versions = [directory.version];
    directory.addReplica(`${A}/x`, `${B}/x`);
    versions.push(directory.version);
    directory.removeReplica(`${A}/x`, `${B}/x`);
    versions.push(directory.version);
    directory.addReplica(`${A}/x`, `${B}/x`);
    versions.push(directory.version);
    for (let i = 1; i < versions.length; i += 1) expect(versions[i]).toBeGreaterThan(versions[i - 1] as number);
  });

  it('converges after concurrent changes on three replicas, with one version everywhere', () => {
    const docs = [new Y.Doc(), new Y.Doc(), new Y.Doc()];
    const dirs = docs.map((doc) => new ReplicationDirectory(doc));
    const [a, b, c] = dirs as [ReplicationDirectory, ReplicationDirectory, ReplicationDirectory];
    a.addReplica(`${A}/x`, `${A}/x`);
    exchange(docs[0] as Y.Doc, docs[1] as Y.Doc);
    exchange(docs[0] as Y.Doc, docs[2] as Y.Doc);
    // Concurrent, without communication: b and c each add their replica, a removes its own.
    b.addReplica(`${A}/x`, `${B}/x`);
    c.addReplica(`${A}/x`, `${C}/x`);
    a.removeReplica(`${A}/x`, `${A}/x`);
    const versionsBefore = dirs.map((dir) => dir.version);
    exchange(docs[0] as Y.Doc, docs[1] as Y.Doc);
    exchange(docs[1] as Y.Doc, docs[2] as Y.Doc);
    exchange(docs[0] as Y.Doc, docs[2] as Y.Doc);
    for (const dir of dirs) expect(dir.lookup(`${A}/x`)?.physicalUrls).toEqual([`${B}/x`, `${C}/x`]);
    expect(new Set(dirs.map((dir) => JSON.stringify(dir.toJSON()))).size).toBe(1);
    dirs.forEach((dir, index) => expect(dir.version).toBeGreaterThanOrEqual(versionsBefore[index] as number));
  });

  it('notifies listeners once per changing transaction', () => {
    const directory = new ReplicationDirectory();
    let calls = 0;
    directory.onChange(() => (calls += 1));
    directory.batch({ add: [[`${A}/1`, `${B}/1`], [`${A}/2`, `${B}/2`]] });
    directory.addReplica(`${A}/1`, `${B}/1`); // already there: no change
    expect(calls).toBe(1);
  });
});

describe('DirectoryStore (crash-safe persistence)', () => {
  it('round-trips the directory through the file', async () => {
    const dir = await tempDir();
    const doc = new Y.Doc();
    const directory = new ReplicationDirectory(doc);
    const store = new DirectoryStore(join(dir, 'directory.ywebpp'));
    expect(await store.load(doc)).toBe(false);
    store.attach(doc);
    directory.addReplica(`${A}/images/*`, `${B}/images/*`);
    directory.addReplica(`${A}/x`, `${C}/x`);
    await store.flush();
    await store.stop();

    const restoredDoc = new Y.Doc();
    expect(await new DirectoryStore(join(dir, 'directory.ywebpp')).load(restoredDoc)).toBe(true);
    const restored = new ReplicationDirectory(restoredDoc);
    expect(restored.toJSON()).toEqual(directory.toJSON());
    expect((await readdir(dir)).filter((name) => name.includes('tmp'))).toEqual([]);
  });

  it('refuses a damaged file with WEBPP_ERR_DIRECTORY_CORRUPT', async () => {
    const dir = await tempDir();
    const path = join(dir, 'directory.ywebpp');
    const doc = new Y.Doc();
    new ReplicationDirectory(doc).addReplica(`${A}/x`, `${B}/x`);
    const file = encodeDirectoryFile(Y.encodeStateAsUpdate(doc));
    file.writeUInt8((file.at(-1) ?? 0) ^ 0xff, file.length - 1);
    await writeFile(path, file);
    await expect(new DirectoryStore(path).load(new Y.Doc())).rejects.toMatchObject({ code: 'WEBPP_ERR_DIRECTORY_CORRUPT' });
    await writeFile(path, file.subarray(0, 30));
    await expect(new DirectoryStore(path).load(new Y.Doc())).rejects.toMatchObject({ code: 'WEBPP_ERR_DIRECTORY_CORRUPT' });
    expect(() => decodeDirectoryFile(Buffer.from('not a directory file at all, not at all, no'), path)).toThrow(/bad magic/);
  });

  it('removes temporary files left by an interrupted write', async () => {
    const dir = await tempDir();
    const path = join(dir, 'directory.ywebpp');
    await writeFile(join(dir, 'directory.ywebpp.webpp-tmp-123-abc'), 'partial');
    expect(await new DirectoryStore(path).load(new Y.Doc())).toBe(false);
    expect(await readdir(dir)).toEqual([]);
  });
});

describe('directory file', () => {
  it('expands paths, absolute URLs, "servers" shorthand and prefixes', () => {
    const pairs = directoryPairsFrom(
      {
        formatVersion: 1,
        logicalOrigin: A,
        entries: [
          { logical: '/misc/file.txt', physical: [`${B}/files/miscFile.txt`] },
          { logical: '/images/*', servers: [A, `${B}/`] },
          { logical: `${C}/abs.css`, servers: [C] },
        ],
      },
      'http://default.localhost',
    );
    expect(pairs).toEqual([
      [`${A}/misc/file.txt`, `${B}/files/miscFile.txt`],
      [`${A}/images/*`, `${A}/images/*`],
      [`${A}/images/*`, `${B}/images/*`],
      [`${C}/abs.css`, `${C}/abs.css`],
    ]);
    // A server with a path is refused, not placed at the root of its host.
    expect(() => directoryPairsFrom({ formatVersion: 1, entries: [{ logical: '/images/*', servers: [`${B}/mirror`] }] }, A)).toThrow(/has a path or a query/);
  });

  it('resolves logical paths against the default origin when the file names none', () => {
    expect(directoryPairsFrom({ formatVersion: 1, entries: [{ logical: '/a', servers: [B] }] }, A)).toEqual([[`${A}/a`, `${B}/a`]]);
  });

  it.each([
    [{ entries: [] }, /formatVersion/],
    [{ formatVersion: 2, entries: [] }, /formatVersion/],
    [{ formatVersion: 1, entries: [{ logical: '/a' }] }, /physical|servers/],
    [{ formatVersion: 1, entries: [{ logical: '/a', physical: ['not a url'] }] }, /entries\/0\/physical/],
    [{ formatVersion: 1, entries: [{ logical: '/a/*', physical: [`${B}/a`] }] }, /"\/\*"/],
    [{ formatVersion: 1, entries: [{ logical: '/a', servers: ['mailto:x@y'] }] }, /servers/],
    [{ formatVersion: 1, entries: [], extra: true }, /unknown property "extra"/],
  ])('rejects %j with a message naming the problem', (json, message) => {
    expect(() => directoryPairsFrom(json, A, 'test.json')).toThrow(message);
    try {
      directoryPairsFrom(json, A, 'test.json');
    } catch (error) {
      expect((error as { code: string }).code).toBe('WEBPP_ERR_DIRECTORY_FILE');
    }
  });

  it('reports unreadable and non-JSON files', async () => {
    const dir = await tempDir();
    await expect(readDirectoryFile(join(dir, 'missing.json'), A)).rejects.toMatchObject({ code: 'WEBPP_ERR_DIRECTORY_FILE' });
    await writeFile(join(dir, 'bad.json'), '{ nope');
    await expect(readDirectoryFile(join(dir, 'bad.json'), A)).rejects.toThrow(/not JSON/);
  });
});

describe('seeding', () => {
  it('applies the file as a diff: additions and removals in the file, runtime changes kept', async () => {
    const dataDir = await tempDir();
    const file = join(dataDir, 'seed.json');
    const write = (entries: object[]) => writeFile(file, JSON.stringify({ formatVersion: 1, logicalOrigin: A, entries }));
    const directory = new ReplicationDirectory();
    const options = { directoryFile: file, directory: undefined, logicalOrigin: A, scriptPath: '/webpp.js', workerPath: '/webpp-sw.js' };
    const save = async () => undefined;

    await write([{ logical: '/one', servers: [B] }, { logical: '/two', servers: [B] }]);
    expect(await applySeed(directory, options, dataDir, save)).toEqual({ changed: true, added: 2, removed: 0 });
    directory.addReplica(`${A}/runtime`, `${C}/runtime`); // e.g. a POST
    directory.removeReplica(`${A}/two`, `${B}/two`); // e.g. a DELETE

    // Same file again: nothing happens, the DELETE is not undone.
    expect(await applySeed(directory, options, dataDir, save)).toEqual({ changed: false, added: 0, removed: 0 });
    expect(directory.lookup(`${A}/two`)).toBeUndefined();

    // Edited file: /one dropped, /three added, /two unchanged (so its DELETE still stands).
    await write([{ logical: '/two', servers: [B] }, { logical: '/three', servers: [C] }]);
    expect(await applySeed(directory, options, dataDir, save)).toEqual({ changed: true, added: 1, removed: 1 });
    expect(directory.entries().map((entry) => entry.logical)).toEqual([`${A}/runtime`, `${A}/three`]);
    expect(JSON.parse(await readFile(join(dataDir, 'directory-seed.json'), 'utf8'))).toHaveLength(2);
  });
});
