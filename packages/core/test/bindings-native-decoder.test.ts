/**
 * decodeBindingsNative (the worker's decoder: the platform's DecompressionStream instead of
 * fflate) decodes the same wire format as decodeBindings, with the same checks and error codes.
 */
import { deflateSync, strToU8 } from 'fflate';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { decodeBindings, decodeBindingsNative, encodeBindings, type Binding, type BindingsDocument } from '@webpp/core';

const A = 'http://a.localhost:8081';
const B = 'http://b.localhost:8082';

function pageWithLinks(count: number): BindingsDocument {
  const bindings: Binding[] = [];
  for (let i = 0; i < count; i++) {
    const path = `/images/photo-${i}.jpg`;
    bindings.push({ logical: A + path, prefix: false, replicas: [A + path, B + path], sizeBytes: 1000 + i });
  }
  return { directoryVersion: 7, bindings, digests: [{ logical: `${A}/images/photo-0.jpg`, integrity: `sha256-${'A'.repeat(43)}=` }] };
}

const base64url = (bytes: Uint8Array) => Buffer.from(bytes).toString('base64url');
const plain = encodeBindings(pageWithLinks(50), { compression: 'never' }).value;
const packed = encodeBindings(pageWithLinks(50), { compression: 'always' }).value;

/** Both decoders' answers for one value: the same document, or the same error code. */
async function expectSameAnswer(value: string | undefined, options = {}): Promise<void> {
  const sync = decodeBindings(value, options);
  const native = await decodeBindingsNative(value, options);
  if (sync.ok) expect(native).toEqual(sync);
  else expect(native.ok ? 'ok' : native.error.code).toBe(sync.error.code);
}

describe('decodeBindingsNative', () => {
  it('restores what the encoder wrote, compressed or not', async () => {
    for (const value of [plain, packed]) expect(await decodeBindingsNative(value)).toEqual({ ok: true, document: pageWithLinks(50) });
  });

  it('restores arbitrary documents the encoder compressed', async () => {
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 1, max: 400 }), fc.integer({ min: 0, max: 1_000 }), async (count, salt) => {
        const document = pageWithLinks(count);
        for (const binding of document.bindings) binding.validator = `"v${salt}-${binding.logical.length}"`;
        const { value } = encodeBindings(document, { compression: 'always', maxBytes: 1 << 20 });
        expect(await decodeBindingsNative(value)).toEqual(decodeBindings(value));
      }),
      { numRuns: 60 },
    );
  });

  it('answers at once when there is nothing to inflate, and with a promise for a compressed payload', () => {
    expect(decodeBindingsNative(plain)).not.toBeInstanceOf(Promise);
    expect(decodeBindingsNative('1.j.3.{a}')).not.toBeInstanceOf(Promise);
    expect(decodeBindingsNative(packed)).toBeInstanceOf(Promise);
  });

  it('gives the error codes of decodeBindings', async () => {
    const bomb = base64url(deflateSync(new Uint8Array(20_000_000), { level: 9 }));
    const cases: [string | undefined, object?][] = [
      [undefined],
      ['1.z.999999999.AAAA'],
      [packed, { maxInflatedBytes: 100 }],
      ['1.z.10.abc*def'],
      ['1.z.10.ab+/'],
      [`1.z.10.${base64url(new Uint8Array([0xff, 0xff, 0xff, 0x03, 0x04]))}`],
      [`1.z.1000.${bomb}`, { maxBytes: 1 << 20 }],
      [`1.z.15.${base64url(deflateSync(strToU8('not json at all')))}`],
      [`1.z.3.${base64url(deflateSync(new Uint8Array([0x41, 0x80, 0x42])))}`],
      [`1.z.0.`],
      [`${packed}x`],
    ];
    for (const [value, options] of cases) await expectSameAnswer(value, options);
    expect(await decodeBindingsNative(`1.z.1000.${bomb}`, { maxBytes: 1 << 20 })).toMatchObject({ ok: false, error: { code: 'MALFORMED' } });
  });

  it('TRUNCATED for every strict prefix of a compressed value', async () => {
    for (let cut = 1; cut < packed.length; cut += 3) {
      const result = await decodeBindingsNative(packed.slice(0, cut));
      expect(result.ok ? 'ok' : result.error.code).toBe('TRUNCATED');
    }
  });

  it('accepts no corrupted value that decodeBindings rejects (every one-character change of a compressed one)', async () => {
    const payloadAt = packed.indexOf('.', packed.indexOf('.', 2) + 1) + 1;
    for (let i = payloadAt; i < packed.length; i++) {
      for (const char of ['A', 'f', '_']) {
        const mutated = packed.slice(0, i) + char + packed.slice(i + 1);
        const sync = decodeBindings(mutated);
        const native = await decodeBindingsNative(mutated);
        // The platform's zlib checks more as it reads (a stored block's length, a code-length
        // set) than fflate: it may reject a corrupt stream that fflate inflates, never the
        // other way round, and its codes for corrupt streams may differ (BAD_COMPRESSION
        // where fflate inflates garbage, MALFORMED, or waits for more, TRUNCATED).
        if (native.ok) expect([i, char, sync]).toEqual([i, char, native]);
      }
    }
  });
});
