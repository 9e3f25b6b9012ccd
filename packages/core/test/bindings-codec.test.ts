import { deflateSync, strToU8 } from 'fflate';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  CONTROL_HEADER,
  DEFAULT_MAX_HEADER_BYTES,
  isControlOff,
  decodeBindings,
  encodeBindings,
  type Binding,
  type BindingsDocument,
  type BindingsErrorCode,
} from '@webpp/core';

const A = 'http://a.localhost:8081';
const B = 'http://b.localhost:8082';
const C = 'https://c.localhost:8443';

function pageWithLinks(count: number): BindingsDocument {
  const bindings: Binding[] = [];
  for (let i = 0; i < count; i++) {
    const path = `/images/photo-${i}.jpg`;
    bindings.push({ logical: A + path, prefix: false, replicas: [A + path, B + path, C + path] });
  }
  return { directoryVersion: 7, bindings };
}

function expectError(value: string | undefined, code: BindingsErrorCode, options = {}) {
  const result = decodeBindings(value, options);
  expect(result.ok).toBe(false);
  if (!result.ok) {
    expect(result.error.code).toBe(code);
    expect(result.error.message.length).toBeGreaterThan(0);
  }
}

/** Base64url without the encoder under test, to craft hostile input. */
const base64url = (bytes: Uint8Array) => Buffer.from(bytes).toString('base64url');

describe('encodeBindings / decodeBindings round trip', () => {
  const document: BindingsDocument = {
    directoryVersion: 12,
    bindings: [
      { logical: `${A}/index.html`, prefix: false, replicas: [`${A}/index.html`, `${B}/index.html`], validator: '"v1-abc"' },
      { logical: `${A}/static/`, prefix: true, replicas: [`${B}/mirror/static/`, `${C}/static/`] },
      { logical: `${A}/search?q=x&y=1`, prefix: false, replicas: [`${C}/search?q=x&y=1`] },
    ],
  };

  for (const compression of ['never', 'always', 'auto'] as const) {
    it(`restores the document (compression: ${compression})`, () => {
      const encoded = encodeBindings(document, { compression });
      expect(encoded.droppedBindings).toBe(0);
      if (compression !== 'auto') expect(encoded.compressed).toBe(compression === 'always');
      expect(decodeBindings(encoded.value)).toEqual({ ok: true, document });
    });
  }

  it('writes the documented plain layout', () => {
    const { value } = encodeBindings(
      { directoryVersion: 3, bindings: [{ logical: `${A}/a.png`, prefix: false, replicas: [`${A}/a.png`, `${B}/x/a.png`] }] },
      { compression: 'never' },
    );
    const json = '{"d":3,"s":["http://a.localhost:8081","http://b.localhost:8082"],"b":[[0,"/a.png",[0,[1,"/x/a.png"]]]]}';
    expect(value).toBe(`1.j.${json.length}.${json}`);
  });

  it('canonicalises URLs (case, default port, fragment)', () => {
    const { value } = encodeBindings({
      directoryVersion: 1,
      bindings: [{ logical: 'HTTP://A.localhost:80/p#frag', prefix: false, replicas: ['https://B.localhost:443/p'] }],
    });
    const result = decodeBindings(value);
    expect(result.ok && result.document.bindings[0]).toEqual({
      logical: 'http://a.localhost/p',
      prefix: false,
      replicas: ['https://b.localhost/p'],
    });
  });

  const origin = fc.constantFrom(A, B, C, 'http://127.0.0.1:9000', 'https://[::1]:8443', 'http://xn--bcher-kva.localhost');
  const segment = fc.stringMatching(/^[A-Za-z0-9._~%-]{1,12}$/).filter((s) => s !== '.' && s !== '..' && !/%(?![0-9A-F]{2})/.test(s));
  const path = fc.array(segment, { maxLength: 4 }).map((parts) => `/${parts.join('/')}`);
  const query = fc.option(fc.stringMatching(/^[a-z0-9=&]{0,10}$/), { nil: undefined });
  const exactBinding = fc.record({ o: origin, p: path, q: query, replicas: fc.array(fc.tuple(origin, fc.option(path)), { minLength: 1, maxLength: 4 }), validator: fc.option(fc.stringMatching(/^[\x21-\x7e]{1,20}$/), { nil: undefined }) }).map(
    ({ o, p, q, replicas, validator }): Binding => {
      const suffix = q === undefined ? p : `${p}?${q}`;
      const binding: Binding = { logical: o + suffix, prefix: false, replicas: replicas.map(([ro, rp]) => ro + (rp ?? suffix)) };
      if (validator !== undefined) binding.validator = validator;
      return binding;
    },
  );
  const prefixBinding = fc.record({ o: origin, p: path, replicas: fc.array(fc.tuple(origin, path), { minLength: 1, maxLength: 3 }) }).map(
    ({ o, p, replicas }): Binding => ({
      logical: `${o}${p.replace(/\/?$/, '/')}`,
      prefix: true,
      replicas: replicas.map(([ro, rp]) => `${ro}${rp.replace(/\/?$/, '/')}`),
    }),
  );
  const documentArbitrary = fc.record({
    directoryVersion: fc.maxSafeNat(),
    bindings: fc.array(fc.oneof(exactBinding, prefixBinding), { maxLength: 30 }),
  });
  const canonical = (url: string) => new URL(url).href;
  const canonicalDocument = (document: BindingsDocument): BindingsDocument => ({
    directoryVersion: document.directoryVersion,
    bindings: document.bindings.map((b) => ({ ...b, logical: canonical(b.logical), replicas: b.replicas.map(canonical) })),
  });

  it('restores arbitrary documents, in header-safe ASCII, whatever the compression', () => {
    fc.assert(
      fc.property(documentArbitrary, fc.constantFrom('never' as const, 'always' as const, 'auto' as const), (document, compression) => {
        const encoded = encodeBindings(document, { compression, maxBytes: 1 << 20 });
        expect(encoded.value).toMatch(/^[\x21-\x7e]+$/);
        expect(decodeBindings(encoded.value)).toEqual({ ok: true, document: canonicalDocument(document) });
      }),
    );
  });

  it('in auto mode compresses exactly when that is shorter', () => {
    fc.assert(
      fc.property(documentArbitrary, (document) => {
        const auto = encodeBindings(document, { maxBytes: 1 << 20 });
        const plain = encodeBindings(document, { compression: 'never', maxBytes: 1 << 20 });
        const packed = encodeBindings(document, { compression: 'always', maxBytes: 1 << 20 });
        expect(auto.value.length).toBe(Math.min(plain.value.length, packed.value.length));
        expect(auto.compressed).toBe(packed.value.length < plain.value.length);
      }),
      { numRuns: 50 },
    );
  });
});

describe('size budget', () => {
  it('keeps a 200-link page over 3 servers within the default 8 KiB, compressed', () => {
    const encoded = encodeBindings(pageWithLinks(200));
    expect(encoded).toMatchObject({ compressed: true, droppedBindings: 0 });
    expect(encoded.value.length).toBeLessThan(DEFAULT_MAX_HEADER_BYTES);
  });

  it('drops bindings from the end, keeping the longest prefix that fits', () => {
    const document = pageWithLinks(200);
    const maxBytes = 2000;
    const encoded = encodeBindings(document, { maxBytes, compression: 'never' });
    expect(encoded.value.length).toBeLessThanOrEqual(maxBytes);
    expect(encoded.droppedBindings).toBeGreaterThan(0);
    const kept = 200 - encoded.droppedBindings;
    const result = decodeBindings(encoded.value);
    expect(result.ok && result.document.bindings).toEqual(document.bindings.slice(0, kept));
    // One more binding would not have fitted.
    const onMore = encodeBindings({ ...document, bindings: document.bindings.slice(0, kept + 1) }, { compression: 'never', maxBytes: 1 << 20 });
    expect(onMore.value.length).toBeGreaterThan(maxBytes);
  });

  it('drops everything when nothing fits, and rejects a budget below 64 bytes', () => {
    const encoded = encodeBindings(pageWithLinks(3), { maxBytes: 64 });
    expect(encoded.droppedBindings).toBe(3);
    const result = decodeBindings(encoded.value);
    expect(result.ok && result.document).toEqual({ directoryVersion: 7, bindings: [] });
    expect(() => encodeBindings(pageWithLinks(1), { maxBytes: 63 })).toThrow(RangeError);
    expect(() => encodeBindings(pageWithLinks(1), { compression: 'gzip' as 'auto' })).toThrow(RangeError);
  });
});

describe('encodeBindings rejects invalid documents', () => {
  const cases: [string, unknown][] = [
    ['a fractional directoryVersion', { directoryVersion: 1.5, bindings: [] }],
    ['a negative directoryVersion', { directoryVersion: -1, bindings: [] }],
    ['missing bindings', { directoryVersion: 1 }],
    ['a relative logical URL', { directoryVersion: 1, bindings: [{ logical: '/x', prefix: false, replicas: [`${A}/x`] }] }],
    ['a javascript: replica', { directoryVersion: 1, bindings: [{ logical: `${A}/x`, prefix: false, replicas: ['javascript:alert(1)'] }] }],
    ['a URL with credentials', { directoryVersion: 1, bindings: [{ logical: `${A}/x`, prefix: false, replicas: ['http://u:p@b.localhost/x'] }] }],
    ['no replicas', { directoryVersion: 1, bindings: [{ logical: `${A}/x`, prefix: false, replicas: [] }] }],
    ['a prefix without a trailing slash', { directoryVersion: 1, bindings: [{ logical: `${A}/img`, prefix: true, replicas: [`${B}/img/`] }] }],
    ['a validator with a space', { directoryVersion: 1, bindings: [{ logical: `${A}/x`, prefix: false, replicas: [`${A}/x`], validator: 'a b' }] }],
  ];
  for (const [name, document] of cases) {
    it(`throws TypeError for ${name}`, () => {
      expect(() => encodeBindings(document as BindingsDocument)).toThrow(TypeError);
    });
  }

  it('names the offending binding', () => {
    const document = pageWithLinks(3);
    document.bindings[2]!.replicas = ['ftp://x/y'];
    expect(() => encodeBindings(document)).toThrow(/bindings\[2\]\.replicas\[0\]/);
  });
});

describe('decodeBindings rejects bad input without throwing', () => {
  const valid = encodeBindings(pageWithLinks(50), { compression: 'never' }).value;
  const validPacked = encodeBindings(pageWithLinks(50), { compression: 'always' }).value;

  it('EMPTY for a missing or blank header', () => {
    expectError(undefined, 'EMPTY');
    expectError(null as unknown as undefined, 'EMPTY');
    expectError('', 'EMPTY');
    expectError('   ', 'EMPTY');
  });

  it('TOO_LARGE above maxBytes or a declared payload above maxInflatedBytes', () => {
    expectError(valid, 'TOO_LARGE', { maxBytes: valid.length - 1 });
    expect(decodeBindings(valid, { maxBytes: valid.length }).ok).toBe(true);
    expectError('1.z.999999999.AAAA', 'TOO_LARGE');
    expectError(validPacked, 'TOO_LARGE', { maxInflatedBytes: 100 });
  });

  it('UNSUPPORTED_VERSION for another format version or payload encoding', () => {
    expectError(`2${valid.slice(1)}`, 'UNSUPPORTED_VERSION');
    expectError('0.j.2.{}', 'UNSUPPORTED_VERSION');
    expectError(valid.replace('1.j.', '1.b.'), 'UNSUPPORTED_VERSION');
  });

  it('TRUNCATED for every strict prefix of a valid value', () => {
    for (const value of [valid, validPacked]) {
      for (let cut = 1; cut < value.length; cut += 7) expectError(value.slice(0, cut), 'TRUNCATED');
      expectError(value.slice(0, -1), 'TRUNCATED');
    }
  });

  it('BAD_COMPRESSION for bad base64 or a stream that does not inflate', () => {
    expectError('1.z.10.abc*def', 'BAD_COMPRESSION'); // '*' is visible ASCII but not base64url
    expectError('1.z.10.ab+/', 'BAD_COMPRESSION');
    expectError(`1.z.10.${base64url(new Uint8Array([0xff, 0xff, 0xff, 0x03, 0x04]))}`, 'BAD_COMPRESSION');
  });

  it('stops inflating a zip bomb at its declared length', () => {
    const bomb = base64url(deflateSync(new Uint8Array(20_000_000), { level: 9 }));
    expectError(`1.z.1000.${bomb}`, 'MALFORMED', { maxBytes: 1 << 20 });
  });

  it('MALFORMED for non-ASCII, bad JSON, wrong shapes and extra bytes', () => {
    expectError('1.j.2.{é}', 'MALFORMED');
    expectError('1.j.3.{a}', 'MALFORMED');
    expectError('hello', 'MALFORMED');
    expectError('1abc', 'MALFORMED');
    expectError('1.jj.2.{}', 'MALFORMED');
    expectError('1.j.2.[]', 'MALFORMED');
    expectError('1.j.2.{}', 'MALFORMED');
    expectError(`${valid}x`, 'MALFORMED');
    const shapes = [
      { d: 1, s: [A], b: [[0, '/x']] },
      { d: 1, s: [A], b: [[1, '/x', [0]]] },
      { d: 1, s: [A], b: [[0, 'x', [0]]] },
      { d: 1, s: [A], b: [[0, '/x', []]] },
      { d: 1, s: [A], b: [[0, '/x', [0], 2]] },
      { d: 1, s: [A], b: [[0, '/x', [0], 0, 'bad validator']] },
      { d: 1, s: [A], b: [[0, '/x', [[0]]]] },
      { d: '1', s: [A], b: [] },
    ];
    for (const shape of shapes) {
      const json = JSON.stringify(shape).replace(/ /g, '\\u0020');
      expectError(`1.j.${json.length}.${json}`, 'MALFORMED');
    }
    const compressedGarbage = 'not json at all';
    expectError(`1.z.${compressedGarbage.length}.${base64url(deflateSync(strToU8(compressedGarbage)))}`, 'MALFORMED');
  });

  it('BAD_URL for a server table entry that is not an http(s) origin', () => {
    for (const server of ['javascript:alert(1)', 'ftp://x', `${A}/path`, 'http://A.localhost:8081', 'http://u:p@x']) {
      const json = JSON.stringify({ d: 1, s: [server], b: [[0, '/x', [0]]] });
      expectError(`1.j.${json.length}.${json}`, 'BAD_URL');
    }
    const json = JSON.stringify({ d: 1, s: [A], b: [[0, '/x?y', [0], 1]] });
    expectError(`1.j.${json.length}.${json}`, 'BAD_URL');
  });

  it('never throws, whatever the input', () => {
    fc.assert(
      fc.property(fc.oneof(fc.string(), fc.string({ unit: 'binary' }), fc.stringMatching(/^1\.[jz]\.\d{1,4}\..*$/)), (value) => {
        const result = decodeBindings(value);
        expect(typeof result.ok).toBe('boolean');
      }),
      { numRuns: 500 },
    );
  });

  it('never throws on mutations of a valid value', () => {
    fc.assert(
      fc.property(fc.constantFrom(valid, validPacked), fc.nat(), fc.integer({ min: 0x21, max: 0x7e }), (value, at, code) => {
        const i = at % value.length;
        const mutated = value.slice(0, i) + String.fromCharCode(code) + value.slice(i + 1);
        const result = decodeBindings(mutated);
        if (!result.ok) expect(result.error.code).toMatch(/^[A-Z_]+$/);
      }),
      { numRuns: 500 },
    );
  });
});

describe('control header', () => {
  it('recognises the off switch, case-insensitively, and nothing else', () => {
    expect(CONTROL_HEADER).toBe('webpp-control');
    for (const value of ['off', ' OFF ', 'Off']) expect(isControlOff(value)).toBe(true);
    for (const value of [null, undefined, '', 'on', 'off, on', 'offline']) expect(isControlOff(value)).toBe(false);
  });
});
