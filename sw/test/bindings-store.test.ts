import { BINDINGS_HEADER, encodeBindings } from '@webpp/core';
import { describe, expect, it } from 'vitest';
import { BindingsStore } from '../src/bindings-store.js';
import { BINDINGS_KEY, memoryKeyValueStore } from '../src/storage.js';

function headers(directoryVersion: number, replicas: string[]): Headers {
  const value = encodeBindings({
    directoryVersion,
    bindings: [{ logical: 'http://a.localhost:1/img/cat.png', prefix: false, replicas }],
  }).value;
  return new Headers({ [BINDINGS_HEADER]: value });
}

describe('BindingsStore', () => {
  it('applies a bindings header at once, so the page that carried it can use it', () => {
    const store = new BindingsStore({ storage: memoryKeyValueStore(), flushDelayMs: 0 });
    expect(store.learn(headers(1, ['http://b.localhost:2/img/cat.png']))).toMatchObject({ kind: 'applied', applied: 1 });
    expect(store.resolve('http://a.localhost:1/img/cat.png')?.physicalUrls).toEqual(['http://b.localhost:2/img/cat.png']);
  });

  it('a newer directory version replaces an older one; an older one never wins', async () => {
    const store = new BindingsStore({ storage: memoryKeyValueStore(), flushDelayMs: 0 });
    await store.learn(headers(2, ['http://b.localhost:2/img/cat.png']));
    await store.learn(headers(1, ['http://old.localhost:9/img/cat.png']));
    expect(store.resolve('http://a.localhost:1/img/cat.png')?.physicalUrls).toEqual(['http://b.localhost:2/img/cat.png']);
    await store.learn(headers(3, ['http://c.localhost:3/img/cat.png']));
    expect(store.resolve('http://a.localhost:1/img/cat.png')?.physicalUrls).toEqual(['http://c.localhost:3/img/cat.png']);
  });

  it('reports a malformed header and keeps what it knew', async () => {
    const store = new BindingsStore({ storage: memoryKeyValueStore(), flushDelayMs: 0 });
    await store.learn(headers(1, ['http://b.localhost:2/img/cat.png']));
    const result = await store.learn(new Headers({ [BINDINGS_HEADER]: '1.j.5.{{{' }));
    expect(result.kind).toBe('rejected');
    expect(store.size).toBe(1);
    expect(store.learn(new Headers())).toEqual({ kind: 'none' });
  });

  it('survives a worker restart through storage, keeping bindings learned meanwhile', async () => {
    const storage = memoryKeyValueStore();
    const before = new BindingsStore({ storage, flushDelayMs: 0 });
    await before.learn(headers(1, ['http://b.localhost:2/img/cat.png']));
    await before.changed();

    const after = new BindingsStore({ storage, flushDelayMs: 0 });
    await after.learn(headers(2, ['http://c.localhost:3/img/cat.png'])); // arrives while loading
    after.restore(await storage.get(BINDINGS_KEY)); // what the client's start-up does (readAll)
    expect(after.resolve('http://a.localhost:1/img/cat.png')?.physicalUrls).toEqual(['http://c.localhost:3/img/cat.png']);

    const fresh = new BindingsStore({ storage, flushDelayMs: 0 });
    fresh.restore(await storage.get(BINDINGS_KEY));
    expect(fresh.resolve('http://a.localhost:1/img/cat.png')?.physicalUrls).toEqual(['http://b.localhost:2/img/cat.png']);
  });

  it('inflates a compressed header with the platform, holding routing (learning) until it is applied', async () => {
    const store = new BindingsStore({ storage: memoryKeyValueStore(), flushDelayMs: 0 });
    const bindings = Array.from({ length: 40 }, (_, i) => ({ logical: `http://a.localhost:1/img/${i}.png`, prefix: false, replicas: [`http://b.localhost:2/img/${i}.png`] }));
    const value = encodeBindings({ directoryVersion: 3, bindings }, { compression: 'always' }).value;
    const learned = store.learn(new Headers({ [BINDINGS_HEADER]: value }));
    expect(learned).toBeInstanceOf(Promise);
    expect(store.learning).toBe(true);
    // The same value again while it inflates is not inflated twice.
    expect(await store.learn(new Headers({ [BINDINGS_HEADER]: value }))).toMatchObject({ kind: 'applied', applied: 0, repeated: true });
    expect(await learned).toMatchObject({ kind: 'applied', applied: 40 });
    await store.settled();
    expect(store.learning).toBe(false);
    expect(store.resolve('http://a.localhost:1/img/7.png')?.physicalUrls).toEqual(['http://b.localhost:2/img/7.png']);
    expect(await store.learn(new Headers({ [BINDINGS_HEADER]: `${value.slice(0, -4)}` }))).toMatchObject({ kind: 'rejected' });
  });
});
