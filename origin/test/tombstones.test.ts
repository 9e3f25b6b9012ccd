/**
 * Tombstones of deleted replicas (replicas/tombstones.ts): the deletion's version is kept
 * on disk, survives a reopen, is never lowered, and the store stays within its bounds
 * (count: the oldest deletion is forgotten first; age: expired ones are forgotten).
 */
import { afterAll, describe, expect, it } from 'vitest';
import { readdir } from 'node:fs/promises';
import { Tombstones } from '../src/replicas/tombstones.js';
import { removeTempDirs, tempDir } from './helpers.js';

afterAll(removeTempDirs);
const quiet = { warn: () => undefined };
const WRITER = 'http://c.localhost:8083';

describe('tombstones', () => {
  it('keep the deletion version (newer of the last version and the deletion time) across a reopen', async () => {
    const root = await tempDir();
    const tombstones = new Tombstones(root, quiet);
    await tombstones.open(1_000);
    // A replica whose last version came from a server with a fast clock: that version stands.
    expect(await tombstones.record('/fast.txt', { timeMs: 5_000, writer: 'http://a.localhost:8081' }, WRITER, 2_000)).toEqual({ timeMs: 5_000, writer: 'http://a.localhost:8081' });
    // Otherwise the deletion itself: every version written before it is older.
    expect(await tombstones.record('/doc.txt', { timeMs: 1_500, writer: 'http://a.localhost:8081' }, WRITER, 2_000)).toEqual({ timeMs: 2_000, writer: WRITER });
    // A later deletion with an older stored version never lowers the tombstone.
    expect(await tombstones.record('/fast.txt', undefined, WRITER, 3_000)).toEqual({ timeMs: 5_000, writer: 'http://a.localhost:8081' });
    const reopened = new Tombstones(root, quiet);
    await reopened.open(4_000);
    expect(reopened.get('/doc.txt', 4_000)).toEqual({ timeMs: 2_000, writer: WRITER });
    expect(reopened.get('/fast.txt', 4_000)).toEqual({ timeMs: 5_000, writer: 'http://a.localhost:8081' });
    expect(reopened.get('/never.txt', 4_000)).toBeUndefined();
  });

  it('forget the oldest deletion beyond maxCount and expired ones after maxAgeMs, on disk too', async () => {
    const root = await tempDir();
    const tombstones = new Tombstones(root, quiet, { maxCount: 3, maxAgeMs: 10_000 });
    await tombstones.open(0);
    for (let index = 0; index < 5; index += 1) await tombstones.record(`/r${index}.txt`, undefined, WRITER, 1_000 + index);
    expect(tombstones.size).toBe(3);
    expect(tombstones.get('/r0.txt', 1_010)).toBeUndefined();
    expect(tombstones.get('/r1.txt', 1_010)).toBeUndefined();
    expect(tombstones.get('/r4.txt', 1_010)).toEqual({ timeMs: 1_004, writer: WRITER });
    expect((await readdir(root)).filter((name) => name.endsWith('.json'))).toHaveLength(3);
    // Past maxAgeMs a tombstone no longer counts, and a reopen removes its file.
    expect(tombstones.get('/r4.txt', 1_004 + 10_001)).toBeUndefined();
    const reopened = new Tombstones(root, quiet, { maxCount: 3, maxAgeMs: 10_000 });
    await reopened.open(1_004 + 10_001);
    expect(reopened.size).toBe(0);
    expect((await readdir(root)).filter((name) => name.endsWith('.json'))).toHaveLength(0);
  });
});
