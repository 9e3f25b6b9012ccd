import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { decodeBindings } from '@webpp/core';
import { ReplicationDirectory } from '../src/directory/replication-directory.js';
import { ReplicaStore } from '../src/replicas/replica-store.js';
import { bindingsOnly } from '../src/bindings/preprocess.js';
import { ResourceSizes } from '../src/bindings/resource-sizes.js';
import { ORIGIN_A, ORIGIN_B, removeTempDirs, tempDir } from './helpers.js';

afterAll(removeTempDirs);

const silent = { warn: () => undefined, error: () => undefined, info: () => undefined };

async function setup() {
  const root = await tempDir();
  const files: Record<string, string> = { 'big.bin': 'x'.repeat(70_000), 'page.html': '<p>hi</p>', 'style.css': 'body{}', 'dir/a.js': 'a()' };
  for (const [name, content] of Object.entries(files)) {
    await mkdir(join(root, name, '..'), { recursive: true });
    await writeFile(join(root, name), content);
  }
  const directory = new ReplicationDirectory();
  for (const path of ['/big.bin', '/page.html', '/style.css', '/missing.png', '/stored.png', '/big.bin?v=2']) {
    directory.addReplica(`${ORIGIN_A}${path}`, `${ORIGIN_A}${path}`);
    directory.addReplica(`${ORIGIN_A}${path}`, `${ORIGIN_B}${path}`);
  }
  directory.addReplica(`${ORIGIN_A}/dir/*`, `${ORIGIN_B}/dir/*`);
  const store = new ReplicaStore(await tempDir(), silent as never);
  await store.open();
  await store.put('/stored.png', new Uint8Array(1_234), { logicalUrl: `${ORIGIN_A}/stored.png`, contentType: 'image/png', version: { timeMs: 1, writer: 'test' }, nowMs: 1 });
  const sizes = new ResourceSizes({ publicUrl: ORIGIN_A, contentRoot: root, directory, store });
  return { root, directory, sizes };
}

describe('binding sizes from the origin', () => {
  it('puts the size of stored replicas and static files in the header, never of HTML, prefixes, queries or missing files', async () => {
    const { directory, sizes } = await setup();
    const urls = ['/big.bin', '/page.html', '/style.css', '/missing.png', '/stored.png', '/big.bin?v=2', '/dir/a.js'].map((path) => `${ORIGIN_A}${path}`);
    const bindings = urls.map((url) => directory.lookup(url)?.binding).filter((binding) => binding !== undefined);
    const result = bindingsOnly(bindings, { directory, maxBindingsHeaderBytes: 8_192, sizes });
    const decoded = decodeBindings(result.bindingsHeader);
    expect(decoded.ok).toBe(true);
    const byUrl = Object.fromEntries((decoded.ok ? decoded.document.bindings : []).map((binding) => [binding.logical, binding.sizeBytes]));
    expect(byUrl).toEqual({
      [`${ORIGIN_A}/big.bin`]: 70_000,
      [`${ORIGIN_A}/page.html`]: undefined,
      [`${ORIGIN_A}/style.css`]: 6,
      [`${ORIGIN_A}/missing.png`]: undefined,
      [`${ORIGIN_A}/stored.png`]: 1_234,
      [`${ORIGIN_A}/big.bin?v=2`]: undefined,
      [`${ORIGIN_A}/dir/`]: undefined,
    });
    // The directory's own bindings are not changed.
    expect(directory.lookup(`${ORIGIN_A}/big.bin`)?.binding.sizeBytes).toBeUndefined();
  });

  it('without sizes configured, headers are as before', async () => {
    const { directory } = await setup();
    const binding = directory.lookup(`${ORIGIN_A}/big.bin`)?.binding;
    const result = bindingsOnly(binding ? [binding] : [], { directory, maxBindingsHeaderBytes: 8_192 });
    expect(result.bindingsHeader).not.toContain('"n"');
  });

  it('sees a changed file after revalidateMs', async () => {
    const { root, directory } = await setup();
    let nowMs = 0;
    const sizes = new ResourceSizes({ publicUrl: ORIGIN_A, contentRoot: root, directory, store: { get: () => undefined } as never, now: () => nowMs });
    expect(sizes.sizeOf(`${ORIGIN_A}/style.css`)).toBe(6);
    await writeFile(join(root, 'style.css'), 'body{color:red}');
    nowMs = 500;
    expect(sizes.sizeOf(`${ORIGIN_A}/style.css`)).toBe(6); // cached
    nowMs = 1_500;
    expect(sizes.sizeOf(`${ORIGIN_A}/style.css`)).toBe(15);
  });
});
