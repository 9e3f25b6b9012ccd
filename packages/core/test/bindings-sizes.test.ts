import { describe, expect, it } from 'vitest';
import { BindingsIndex, decodeBindings, encodeBindings, type Binding, type BindingsDocument } from '@webpp/core';
import { decodeBindings as decodeBeforeSizes } from './fixtures/decode-before-sizes.js';

const A = 'http://a.localhost:8081';
const B = 'http://b.localhost:8082';
const DIGEST = 'sha256-47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=';

function document(): BindingsDocument {
  return {
    directoryVersion: 7,
    bindings: [
      { logical: `${A}/index.html`, prefix: false, replicas: [`${A}/index.html`, `${B}/index.html`], validator: '"v1"' },
      { logical: `${A}/static/`, prefix: true, replicas: [`${B}/static/`] },
      { logical: `${A}/big.bin`, prefix: false, replicas: [`${A}/big.bin`, `${B}/m/big.bin`], sizeBytes: 512_000 },
      { logical: `${A}/small.css`, prefix: false, replicas: [`${B}/small.css`], sizeBytes: 0 },
    ],
    digests: [{ logical: `${A}/big.bin`, integrity: DIGEST }],
  };
}

/** The document as a decoder without sizes returns it. */
function withoutSizes(doc: BindingsDocument): BindingsDocument {
  return { ...doc, bindings: doc.bindings.map(({ sizeBytes: _size, ...binding }): Binding => binding) };
}

describe('binding sizes in the bindings header', () => {
  it('round-trip on exact bindings, plain and compressed, beside digests', () => {
    for (const compression of ['never', 'always'] as const) {
      const encoded = encodeBindings(document(), { compression });
      expect(decodeBindings(encoded.value)).toEqual({ ok: true, document: document() });
    }
    const json = encodeBindings(document(), { compression: 'never' }).value;
    expect(json).toContain('"n":[[2,512000],[3,0]]');
  });

  it('a decoder of the release before sizes reads a header with sizes: same bindings, sizes ignored', () => {
    for (const compression of ['never', 'always'] as const) {
      const { value } = encodeBindings(document(), { compression });
      expect(decodeBeforeSizes(value)).toEqual({ ok: true, document: withoutSizes(document()) });
    }
  });

  it('a new decoder reads a header without sizes as before', () => {
    const old = encodeBindings(withoutSizes(document()), { compression: 'never' }).value;
    expect(old).not.toContain('"n"');
    const decoded = decodeBindings(old);
    expect(decoded).toEqual({ ok: true, document: withoutSizes(document()) });
  });

  it('leaves out malformed size entries, not the header', () => {
    const rows = [
      [0, '/a.js', [0, 1]],
      [0, '/dir/', [1], 1],
      [0, '/b.js', [1]],
    ];
    const n = [[0, 1234], [1, 99], [2, -5], [7, 10], ['0', 3], [2], [2, 1.5], [0, 4321], 'junk', [2, 2 ** 53]];
    const json = JSON.stringify({ d: 1, s: [A, B], b: rows, n });
    const decoded = decodeBindings(`1.j.${json.length}.${json}`);
    expect(decoded.ok).toBe(true);
    const bindings = decoded.ok ? decoded.document.bindings : [];
    expect(bindings.map((binding) => binding.sizeBytes)).toEqual([1234, undefined, undefined]);
    const notAnArray = JSON.stringify({ d: 1, s: [A, B], b: rows, n: { 0: 5 } });
    expect(decodeBindings(`1.j.${notAnArray.length}.${notAnArray}`).ok).toBe(true);
  });

  it('the encoder refuses a size on a prefix binding or a size that is not a byte count', () => {
    const prefix: BindingsDocument = { directoryVersion: 1, bindings: [{ logical: `${A}/d/`, prefix: true, replicas: [`${B}/d/`], sizeBytes: 10 }] };
    expect(() => encodeBindings(prefix)).toThrow('bindings[0].sizeBytes is only for exact bindings');
    for (const sizeBytes of [-1, 1.5, Number.NaN, 2 ** 53]) {
      const bad: BindingsDocument = { directoryVersion: 1, bindings: [{ logical: `${A}/x`, prefix: false, replicas: [`${B}/x`], sizeBytes }] };
      expect(() => encodeBindings(bad)).toThrow(/bindings\[0\]\.sizeBytes must be a safe integer >= 0/);
    }
  });

  it('drops the sizes of bindings dropped for the budget, and keeps the others', () => {
    const bindings: Binding[] = Array.from({ length: 300 }, (_, i) => ({
      logical: `${A}/files/${i}-${'x'.repeat(i % 17)}.bin`,
      prefix: false,
      replicas: [`${A}/files/${i}-${'x'.repeat(i % 17)}.bin`, `${B}/files/${i}.bin`],
      sizeBytes: 1_000 + i,
    }));
    const encoded = encodeBindings({ directoryVersion: 2, bindings }, { maxBytes: 2_048, compression: 'never' });
    expect(encoded.droppedBindings).toBeGreaterThan(0);
    expect(encoded.value.length).toBeLessThanOrEqual(2_048);
    const decoded = decodeBindings(encoded.value);
    const kept = decoded.ok ? decoded.document.bindings : [];
    expect(kept).toEqual(bindings.slice(0, 300 - encoded.droppedBindings));
  });

  it('BindingsIndex keeps a binding size through resolve and IndexedDB JSON; an old stored entry has none', () => {
    const index = new BindingsIndex();
    index.apply(document());
    expect(index.resolve(`${A}/big.bin`)?.binding.sizeBytes).toBe(512_000);
    expect(index.resolve(`${A}/index.html`)?.binding.sizeBytes).toBeUndefined();
    expect(index.resolve(`${A}/static/app.js`)?.binding.sizeBytes).toBeUndefined();
    const restored = BindingsIndex.fromJSON(JSON.parse(JSON.stringify(index.toJSON())));
    expect(restored.resolve(`${A}/big.bin`)?.binding.sizeBytes).toBe(512_000);
    const stored = JSON.parse(JSON.stringify(index.toJSON()));
    stored.entries.find((entry: { binding: Binding }) => entry.binding.logical === `${A}/big.bin`).binding.sizeBytes = 'large';
    const tolerant = BindingsIndex.fromJSON(stored);
    expect(tolerant.resolve(`${A}/big.bin`)?.physicalUrls).toEqual([`${A}/big.bin`, `${B}/m/big.bin`]);
    expect(tolerant.resolve(`${A}/big.bin`)?.binding.sizeBytes).toBeUndefined();
  });
});
