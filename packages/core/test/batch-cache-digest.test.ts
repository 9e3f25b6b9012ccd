import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  CacheDigest,
  crc32,
  decodeCacheDigest,
  encodeCacheDigest,
  createSha256,
  sha256,
  type CacheDigestEntry,
} from '../src/batch/index.js';
import { decodeGolombRice, encodeGolombRice } from '../src/batch/golomb.js';

const hex = (bytes: Uint8Array): string => [...bytes].map((b) => b.toString(16).padStart(2, '0')).join('');
const utf8 = (text: string): Uint8Array => new TextEncoder().encode(text);

function entries(count: number, prefix = 'http://a.localhost:8081/img/'): CacheDigestEntry[] {
  return Array.from({ length: count }, (_, i) => ({ url: `${prefix}${i}.png`, validator: `W/"${i}-${i * 7}"` }));
}

function decodeOk(value: string): CacheDigest {
  const result = decodeCacheDigest(value);
  if (!result.ok) throw new Error(result.error.message);
  return result.digest;
}

describe('hash and checksum primitives', () => {
  it('SHA-256 matches the FIPS 180-4 test vectors', () => {
    expect(hex(sha256(utf8('')))).toBe('e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855');
    expect(hex(sha256(utf8('abc')))).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
    expect(hex(sha256(utf8('abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq')))).toBe(
      '248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1',
    );
    expect(hex(sha256(new Uint8Array(1_000_000).fill(0x61)))).toBe(
      'cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0',
    );
    // Incremental: any split of the message gives the same digest (block and padding edges).
    const message = new Uint8Array(300).map((_, i) => (i * 31 + 7) & 0xff);
    const whole = hex(sha256(message));
    expect(whole).toBe(createHash('sha256').update(message).digest('hex'));
    for (const cuts of [[0], [1], [55], [56], [63], [64], [65], [119], [120], [1, 2, 3], [64, 128, 192], [299]]) {
      const hash = createSha256();
      let from = 0;
      for (const cut of [...cuts, message.length]) {
        hash.update(message.subarray(from, cut));
        from = cut;
      }
      expect(hex(hash.digest()), `cut at ${cuts.join(',')}`).toBe(whole);
    }
  });

  it('CRC-32 matches the standard check value', () => {
    expect(crc32(utf8('123456789'))).toBe(0xcbf43926);
    expect(crc32(utf8('1234'), utf8('56789'))).toBe(0xcbf43926);
    expect(crc32()).toBe(0);
  });

  it('Golomb-Rice coding round-trips sorted sets (property)', () => {
    fc.assert(
      // Values spread over about 2^k per entry, as in a real digest (unary quotients stay short).
      fc.property(
        fc.integer({ min: 1, max: 16 }).chain((k) =>
          fc.tuple(fc.uniqueArray(fc.integer({ min: 0, max: 2 ** (k + 8) }), { maxLength: 200 }), fc.constant(k)),
        ),
        ([values, k]) => {
        const sorted = [...values].sort((a, b) => a - b);
        expect(decodeGolombRice(encodeGolombRice(sorted, k), k, 10_000)).toEqual(sorted);
        },
      ),
    );
  });
});

describe('cache digest (Golomb-coded set)', () => {
  it('contains every encoded (URL, validator) pair', () => {
    const held = entries(300);
    const encoded = encodeCacheDigest(held);
    expect(encoded).toMatchObject({ included: 300, dropped: 0 });
    const digest = decodeOk(encoded.value);
    for (const entry of held) expect(digest.has(entry.url, entry.validator)).toBe(true);
  });

  it('does not match the same URL with a new validator (a changed resource is sent again)', () => {
    const digest = decodeOk(encodeCacheDigest(entries(30)).value);
    let falsePositives = 0;
    for (let i = 0; i < 30; i++) if (digest.has(`http://a.localhost:8081/img/${i}.png`, `W/"${i}-changed"`)) falsePositives += 1;
    // 30 tests at a 1/256 rate: more than 3 false positives would be a 1-in-10^5 event.
    expect(falsePositives).toBeLessThanOrEqual(3);
  });

  it('keeps the false-positive rate near 2^-p', () => {
    const digest = decodeOk(encodeCacheDigest(entries(1000), { falsePositiveLog2: 6 }).value);
    const probes = entries(20_000, 'http://a.localhost:8081/other/');
    const hits = probes.filter((probe) => digest.has(probe.url, probe.validator)).length;
    // Expected rate <= 1/64 (N rounded up to 1024 makes it 1000/1024 of that): ~305 of 20 000.
    expect(hits / probes.length).toBeLessThan(1 / 64 + 0.005);
    expect(hits).toBeGreaterThan(0);
  });

  it('ignores a URL fragment, which never reaches a server', () => {
    const digest = decodeOk(encodeCacheDigest([{ url: 'http://a.localhost:8081/x.png#frag', validator: '"1"' }]).value);
    expect(digest.has('http://a.localhost:8081/x.png', '"1"')).toBe(true);
  });

  it('costs about p + 1.5 bits per entry and is header-safe', () => {
    const encoded = encodeCacheDigest(entries(1000));
    const bitsPerEntry = ((encoded.value.length * 6) - 24) / 1000;
    expect(bitsPerEntry).toBeGreaterThan(8);
    expect(bitsPerEntry).toBeLessThan(11);
    expect(encoded.value).toMatch(/^[A-Za-z0-9_-]+$/);
  });

  it('drops the least useful (last) entries to fit its size bound', () => {
    const held = entries(5000);
    const encoded = encodeCacheDigest(held, { maxBytes: 1024 });
    expect(encoded.value.length).toBeLessThanOrEqual(1024);
    expect(encoded.included).toBeGreaterThan(500);
    expect(encoded.included + encoded.dropped).toBe(5000);
    const digest = decodeOk(encoded.value);
    for (const entry of held.slice(0, encoded.included)) expect(digest.has(entry.url, entry.validator)).toBe(true);
  });

  it('encodes an empty cache as no header at all', () => {
    expect(encodeCacheDigest([])).toEqual({ value: '', included: 0, dropped: 0 });
    expect(decodeCacheDigest('')).toMatchObject({ ok: false, error: { code: 'EMPTY' } });
    expect(decodeCacheDigest(null)).toMatchObject({ ok: false, error: { code: 'EMPTY' } });
  });

  it('rejects bad input without throwing', () => {
    expect(decodeCacheDigest('not base64!')).toMatchObject({ ok: false, error: { code: 'MALFORMED' } });
    expect(decodeCacheDigest('AQ')).toMatchObject({ ok: false, error: { code: 'MALFORMED' } });
    expect(decodeCacheDigest('AgEI')).toMatchObject({ ok: false, error: { code: 'UNSUPPORTED_VERSION' } });
    expect(decodeCacheDigest('AQEg')).toMatchObject({ ok: false, error: { code: 'MALFORMED' } });
    expect(decodeCacheDigest('A'.repeat(20_000))).toMatchObject({ ok: false, error: { code: 'TOO_LARGE' } });
    expect(() => encodeCacheDigest(entries(1), { falsePositiveLog2: 0 })).toThrow(RangeError);
    fc.assert(
      fc.property(fc.string({ maxLength: 300 }), (value) => {
        const result = decodeCacheDigest(value);
        if (result.ok) expect(typeof result.digest.has('http://x.localhost/', '"1"')).toBe('boolean');
      }),
    );
  });

  it('round-trips membership for arbitrary entries (property)', () => {
    const entryArb = fc.record({
      url: fc.webUrl({ withFragments: false }),
      validator: fc.stringMatching(/^[\x21-\x7e]{1,30}$/),
    });
    fc.assert(
      fc.property(fc.array(entryArb, { maxLength: 60 }), fc.integer({ min: 1, max: 16 }), (held, p) => {
        const digest = decodeOk(encodeCacheDigest(held, { falsePositiveLog2: p }).value || 'AQAI');
        for (const entry of held) expect(digest.has(entry.url, entry.validator)).toBe(true);
      }),
      { numRuns: 40 },
    );
  });
});
