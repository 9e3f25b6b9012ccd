/**
 * The policy's shared state (the paper's latency table) in storage: batched writes, and two writers (two worker
 * versions during an update) that may lose a sample but never corrupt the table.
 */
import { FAST_PRESET, LatencyTable, createPolicy } from '@webpp/core';
import type { TablePolicy } from '@webpp/core';
import { describe, expect, it } from 'vitest';
import { PolicyStore } from '../src/policy-store.js';
import { LATENCY_TABLE_KEY, memoryKeyValueStore } from '../src/storage.js';
import type { KeyValueStore } from '../src/storage.js';

/** Counts writes to a store. */
function counting(store: KeyValueStore): KeyValueStore & { writes: number } {
  const counted = {
    writes: 0,
    get: (key: string) => store.get(key),
    set: (key: string, value: unknown) => ((counted.writes += 1), store.set(key, value)),
    update: (key: string, updater: (stored: unknown) => unknown) => ((counted.writes += 1), store.update(key, updater)),
  };
  return counted;
}

/** A store of the `fast` policy, with that policy's latency table at hand. */
function newStore(storage: KeyValueStore, flushDelayMs: number): PolicyStore & { table: LatencyTable } {
  const policy = createPolicy('fast', { random: Math.random, now: Date.now }) as TablePolicy;
  return Object.assign(new PolicyStore({ policy, storage, flushDelayMs }), { table: policy.table });
}

describe('PolicyStore', () => {
  it('batches many changes into one write, off the hot path', async () => {
    const storage = counting(memoryKeyValueStore());
    const store = newStore(storage, 20);
    const writes: Promise<void>[] = [];
    for (let i = 0; i < 50; i++) {
      store.table.recordSample('http://b.localhost:1', 10 + i);
      writes.push(store.changed());
    }
    expect(storage.writes).toBe(0); // nothing written synchronously
    await Promise.all(writes);
    expect(storage.writes).toBe(1);
    const stored = LatencyTable.fromJSON(await storage.get(LATENCY_TABLE_KEY), FAST_PRESET);
    expect(stored.get('http://b.localhost:1')?.sampleCount).toBe(50);
  });

  it('merges with what another writer stored instead of overwriting it', async () => {
    const storage = memoryKeyValueStore();
    const oldWorker = newStore(storage, 5);
    const newWorker = newStore(storage, 5);
    oldWorker.table.recordSample('http://a.localhost:1', 100);
    newWorker.table.recordSample('http://b.localhost:1', 20);
    await Promise.all([oldWorker.changed(), newWorker.changed()]);

    const stored = LatencyTable.fromJSON(await storage.get(LATENCY_TABLE_KEY), FAST_PRESET);
    expect(stored.servers().sort()).toEqual(['http://a.localhost:1', 'http://b.localhost:1']);
    // The writer that flushed second also learned the other's rows.
    const tables = [oldWorker.table.servers().length, newWorker.table.servers().length].sort();
    expect(tables[1]).toBe(2);
  });

  it('loads the stored table on start, and survives garbage in storage', async () => {
    const storage = memoryKeyValueStore();
    const first = newStore(storage, 0);
    first.table.recordSample('http://b.localhost:1', 42);
    await first.changed();
    const restarted = newStore(storage, 0);
    restarted.restore(await storage.get(LATENCY_TABLE_KEY)); // what the client's start-up does (readAll)
    expect(restarted.table.get('http://b.localhost:1')?.meanMs).toBe(42);

    await storage.set(LATENCY_TABLE_KEY, { formatVersion: 1, servers: { x: 'not a row' } });
    const tolerant = newStore(storage, 0);
    tolerant.restore(await storage.get(LATENCY_TABLE_KEY));
    expect(tolerant.table.servers()).toEqual([]);
  });

  it('concurrent writers interleaving many flushes always leave a valid table', async () => {
    const storage = memoryKeyValueStore();
    const writers = [0, 1, 2].map(() => newStore(storage, 0));
    const pending: Promise<void>[] = [];
    for (let round = 0; round < 20; round++) {
      writers.forEach((writer, index) => {
        writer.table.recordSample(`http://s${(round + index) % 4}.localhost:1`, 10 + round);
        pending.push(writer.changed());
      });
    }
    await Promise.all(pending);
    const json = (await storage.get(LATENCY_TABLE_KEY)) as { servers: Record<string, unknown> };
    const table = LatencyTable.fromJSON(json, FAST_PRESET);
    // Every stored row is valid (fromJSON drops malformed rows) and every server is there.
    expect(table.servers().length).toBe(Object.keys(json.servers).length);
    expect(table.servers().sort()).toEqual([0, 1, 2, 3].map((i) => `http://s${i}.localhost:1`));
  });
});
