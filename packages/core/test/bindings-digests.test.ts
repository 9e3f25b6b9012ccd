import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { DEFAULT_MAX_HEADER_BYTES, decodeBindings, encodeBindings, isSha256Integrity, type BindingsDocument } from '@webpp/core';
import { decodeBindings as decodeBeforeDigests } from './fixtures/decode-before-digests.js';

const A = 'http://a.localhost:8081';
const B = 'http://b.localhost:8082';

function sri(text: string): string {
  return `sha256-${createHash('sha256').update(text).digest('base64')}`;
}

/** A page under a "/*" prefix binding with `count` files, each with its digest. */
function prefixPage(count: number): BindingsDocument {
  const digests = Array.from({ length: count }, (_, i) => ({ logical: `${A}/img/${i}.png`, integrity: sri(`file ${i}`) }));
  return { directoryVersion: 3, bindings: [{ logical: `${A}/`, prefix: true, replicas: [`${A}/`, `${B}/`] }], digests };
}

describe('content digests in the bindings header', () => {
  it('round-trips digests of URLs under a prefix binding and of exact bindings', () => {
    const document: BindingsDocument = {
      directoryVersion: 9,
      bindings: [
        { logical: `${A}/app.js`, prefix: false, replicas: [`${A}/app.js`, `${B}/mirror/app.js`] },
        { logical: `${A}/img/`, prefix: true, replicas: [`${B}/img/`] },
      ],
      digests: [
        { logical: `${A}/app.js`, integrity: sri('app') },
        { logical: `${A}/img/a.png?v=2`, integrity: sri('a') },
      ],
    };
    for (const compression of ['never', 'always'] as const) {
      const encoded = encodeBindings(document, { compression });
      expect(encoded.droppedDigests).toBe(0);
      const decoded = decodeBindings(encoded.value);
      expect(decoded.ok && decoded.document).toEqual(document);
    }
  });

  it('an old decoder reads a header with digests: same bindings, digests ignored', () => {
    const document = prefixPage(20);
    document.bindings.push({ logical: `${A}/app.js`, prefix: false, replicas: [`${B}/app.js`], validator: '"sha256-x"' });
    for (const compression of ['never', 'always'] as const) {
      const { value } = encodeBindings(document, { compression });
      const old = decodeBeforeDigests(value);
      expect(old).toEqual({ ok: true, document: { directoryVersion: 3, bindings: document.bindings } });
    }
  });

  it('a new decoder reads an old header (no digests key)', () => {
    const json = JSON.stringify({ d: 4, s: [A, B], b: [[0, '/', [0, 1], 1], [0, '/x.css', [[1, '/m/x.css']]]] });
    const decoded = decodeBindings(`1.j.${json.length}.${json}`);
    expect(decoded).toEqual({
      ok: true,
      document: {
        directoryVersion: 4,
        bindings: [
          { logical: `${A}/`, prefix: true, replicas: [`${A}/`, `${B}/`] },
          { logical: `${A}/x.css`, prefix: false, replicas: [`${B}/m/x.css`] },
        ],
      },
    });
    // Without digests the encoder writes exactly the old format.
    expect(encodeBindings(decoded.ok ? decoded.document : { directoryVersion: 0, bindings: [] }, { compression: 'never' }).value).toBe(
      `1.j.${json.length}.${json}`,
    );
  });

  it('drops malformed digest entries, never the header', () => {
    const good = sri('ok');
    const json = JSON.stringify({
      d: 1,
      s: [A],
      b: [[0, '/', [0], 1]],
      i: [[0, '/ok', good], [0, '/bad', 'sha256-short'], [5, '/x', good], [0, 'rel', good], 'junk', [0, '/md5', 'md5-abc'], [0, '/f#x', good]],
    });
    const decoded = decodeBindings(`1.j.${json.length}.${json}`);
    expect(decoded.ok && decoded.document.digests).toEqual([{ logical: `${A}/ok`, integrity: good }]);
    const notAList = JSON.stringify({ d: 1, s: [A], b: [], i: { 0: good } });
    const second = decodeBindings(`1.j.${notAList.length}.${notAList}`);
    expect(second.ok && second.document.digests).toEqual([]);
  });

  it('sends only digests a kept binding covers', () => {
    const document: BindingsDocument = {
      directoryVersion: 1,
      bindings: [{ logical: `${A}/img/`, prefix: true, replicas: [`${B}/img/`] }],
      digests: [
        { logical: `${A}/img/a.png`, integrity: sri('a') },
        { logical: `${A}/other.js`, integrity: sri('o') },
      ],
    };
    const encoded = encodeBindings(document);
    expect(encoded.droppedDigests).toBe(1);
    const decoded = decodeBindings(encoded.value);
    expect(decoded.ok && decoded.document.digests).toEqual([{ logical: `${A}/img/a.png`, integrity: sri('a') }]);
  });

  it('keeps within the 8 KiB budget: bindings first, then as many digests as fit', () => {
    const document = prefixPage(400);
    const encoded = encodeBindings(document);
    expect(encoded.value.length).toBeLessThanOrEqual(DEFAULT_MAX_HEADER_BYTES);
    expect(encoded.droppedBindings).toBe(0);
    expect(encoded.droppedDigests).toBeGreaterThan(0);
    const kept = 400 - encoded.droppedDigests;
    expect(kept).toBeGreaterThan(50);
    const decoded = decodeBindings(encoded.value);
    expect(decoded.ok && decoded.document.digests).toEqual(document.digests?.slice(0, kept));
    // One more digest would not have fitted.
    const oneMore = encodeBindings({ ...document, digests: document.digests?.slice(0, kept + 1) }, { maxBytes: 1 << 20 });
    expect(oneMore.value.length).toBeGreaterThan(DEFAULT_MAX_HEADER_BYTES);
  });

  it('never drops a binding to make room for a digest', () => {
    const document = prefixPage(5);
    const withoutDigests = encodeBindings({ ...document, digests: [] }, { compression: 'never' });
    const encoded = encodeBindings(document, { maxBytes: withoutDigests.value.length + 10, compression: 'never' });
    expect(encoded.droppedBindings).toBe(0);
    expect(encoded.droppedDigests).toBe(5);
    expect(encoded.value).toBe(withoutDigests.value);
  });

  it('rejects a malformed digest when encoding, naming it', () => {
    const document = prefixPage(2);
    document.digests![1] = { logical: `${A}/x`, integrity: 'sha256-nope' };
    expect(() => encodeBindings(document)).toThrow(/digests\[1\]\.integrity/);
    expect(isSha256Integrity(sri('x'))).toBe(true);
    expect(isSha256Integrity(sri('x').replace('sha256-', 'sha384-'))).toBe(false);
  });
});
