/**
 * Fuzzing the wire readers that take input from the network: the bindings header decoder,
 * the batch framing reader and the cache-digest reader. Random input and mutations of real
 * encodings (flipped characters and bytes, cuts, splices, insertions), fed whole or in random
 * chunkings: none may throw out (other than the documented BatchFormatError), each rejection
 * carries a documented code, and whatever is accepted is well formed.
 *
 * Bounded and reproducible: fixed seed (FUZZ_SEED overrides it, e.g. to explore), a few
 * hundred runs each; fast-check prints the seed and the shrunk counterexample on failure.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { BATCH_PREAMBLE } from '../src/batch/format.js';
import { encodeBatch } from '../src/batch/encode.js';
import {
  BatchDecoder,
  BatchFormatError,
  decodeBindings,
  decodeCacheDigest,
  encodeBindings,
  encodeCacheDigest,
  readBatch,
  type BatchFrame,
  type BatchManifest,
  type BatchPart,
  type BindingsDocument,
} from '@webpp/core';

const SEED = Number(process.env.FUZZ_SEED ?? 20_261_124);
const runs = (numRuns: number) => ({ seed: SEED, numRuns });

// ------------------------------------------------------------------ mutation

type Edit =
  | { kind: 'flip'; at: number; to: number }
  | { kind: 'cut'; at: number }
  | { kind: 'drop'; at: number; length: number }
  | { kind: 'insert'; at: number; what: number[] }
  | { kind: 'duplicate'; at: number; length: number };

/** Positions are fractions of the current length, so one edit list fits any input. */
const editArb: fc.Arbitrary<Edit> = fc.oneof(
  fc.record({ kind: fc.constant('flip' as const), at: fc.nat(), to: fc.nat({ max: 255 }) }),
  fc.record({ kind: fc.constant('cut' as const), at: fc.nat() }),
  fc.record({ kind: fc.constant('drop' as const), at: fc.nat(), length: fc.integer({ min: 1, max: 40 }) }),
  fc.record({ kind: fc.constant('insert' as const), at: fc.nat(), what: fc.array(fc.nat({ max: 255 }), { minLength: 1, maxLength: 12 }) }),
  fc.record({ kind: fc.constant('duplicate' as const), at: fc.nat(), length: fc.integer({ min: 1, max: 200 }) }),
);

function mutate<T>(input: readonly T[], edits: readonly Edit[], fromByte: (byte: number) => T): T[] {
  let items = [...input];
  for (const edit of edits) {
    const at = items.length === 0 ? 0 : edit.at % (items.length + 1);
    if (edit.kind === 'flip' && items.length > 0) items[at % items.length] = fromByte(edit.to);
    else if (edit.kind === 'cut') items = items.slice(0, at);
    else if (edit.kind === 'drop') items.splice(at, edit.length);
    else if (edit.kind === 'insert') items.splice(at, 0, ...edit.what.map(fromByte));
    else if (edit.kind === 'duplicate') items.splice(at, 0, ...items.slice(at, at + edit.length));
  }
  return items;
}

const mutateText = (text: string, edits: readonly Edit[]): string => mutate([...text], edits, (byte) => String.fromCharCode(byte)).join('');
const mutateBytes = (bytes: Uint8Array, edits: readonly Edit[]): Uint8Array => Uint8Array.from(mutate([...bytes], edits, (byte) => byte));

/** Splits bytes at the given cut points (random chunkings of a network stream). */
function chunk(bytes: Uint8Array, sizes: readonly number[]): Uint8Array[] {
  const chunks: Uint8Array[] = [];
  let offset = 0;
  for (const size of sizes) {
    if (offset >= bytes.length) break;
    chunks.push(bytes.subarray(offset, offset + size));
    offset += size;
  }
  if (offset < bytes.length) chunks.push(bytes.subarray(offset));
  return chunks;
}

// ------------------------------------------------------------------ bindings

const A = 'http://a.localhost:8081';
const B = 'http://b.localhost:8082';
const BINDINGS_CODES = new Set(['EMPTY', 'TOO_LARGE', 'UNSUPPORTED_VERSION', 'MALFORMED', 'TRUNCATED', 'BAD_COMPRESSION', 'BAD_URL']);

const documents: BindingsDocument[] = [
  {
    directoryVersion: 12,
    bindings: [
      { logical: `${A}/index.html`, prefix: false, replicas: [`${A}/index.html`, `${B}/index.html`], validator: '"v1-abc"' },
      { logical: `${A}/static/`, prefix: true, replicas: [`${B}/mirror/static/`] },
      { logical: `${A}/search?q=x&y=1`, prefix: false, replicas: [`${B}/search?q=x&y=1`] },
    ],
  },
  {
    directoryVersion: 3,
    bindings: Array.from({ length: 40 }, (_, i) => ({ logical: `${A}/img/${i}.png`, prefix: false, replicas: [`${A}/img/${i}.png`, `${B}/img/${i}.png`] })),
  },
];
const validHeaders = documents.flatMap((document) =>
  (['never', 'always'] as const).map((compression) => encodeBindings(document, { compression }).value),
);

/** A decoded document is well formed: what the worker relies on when it applies it. */
function expectWellFormed(document: BindingsDocument): void {
  expect(Number.isSafeInteger(document.directoryVersion) && document.directoryVersion >= 0).toBe(true);
  for (const binding of document.bindings) {
    expect(new URL(binding.logical).href).toBe(binding.logical);
    expect(typeof binding.prefix).toBe('boolean');
    expect(binding.replicas.length).toBeGreaterThan(0);
    for (const replica of binding.replicas) expect(['http:', 'https:']).toContain(new URL(replica).protocol);
    if (binding.validator !== undefined) expect(binding.validator).toMatch(/^[\x21-\x7e]{1,256}$/);
  }
}

function checkBindings(value: string, options = {}): void {
  let result!: ReturnType<typeof decodeBindings>;
  expect(() => (result = decodeBindings(value, options))).not.toThrow();
  if (result.ok) expectWellFormed(result.document);
  else {
    expect(BINDINGS_CODES.has(result.error.code)).toBe(true);
    expect(result.error.message.length).toBeGreaterThan(0);
  }
}

describe('fuzz: bindings header decoder', () => {
  it('never throws on random strings and bytes', () => {
    fc.assert(
      fc.property(fc.oneof(fc.string({ maxLength: 400 }), fc.string({ unit: 'binary', maxLength: 200 }), fc.stringMatching(/^1\.[jz]\.\d{1,4}\.[\x20-\x7e]{0,300}$/)), (value) => {
        checkBindings(value);
      }),
      runs(400),
    );
  });

  it('never throws on mutations of real headers (plain and compressed), and rejects with a code', () => {
    fc.assert(
      fc.property(fc.constantFrom(...validHeaders), fc.array(editArb, { minLength: 1, maxLength: 4 }), (header, edits) => {
        checkBindings(mutateText(header, edits));
        // Tight inflation and size budgets must reject, not throw.
        checkBindings(mutateText(header, edits), { maxBytes: 200, maxInflatedBytes: 300 });
      }),
      runs(500),
    );
  });

  it('never throws on two real headers spliced together', () => {
    fc.assert(
      fc.property(fc.constantFrom(...validHeaders), fc.constantFrom(...validHeaders), fc.nat(), fc.nat(), (x, y, i, j) => {
        checkBindings(x.slice(0, i % (x.length + 1)) + y.slice(j % (y.length + 1)));
      }),
      runs(300),
    );
  });
});

// ------------------------------------------------------------------ batch framing

const PAGE = `${A}/index.html`;
const BATCH_CODES = new Set(['BAD_PREAMBLE', 'TRUNCATED', 'CORRUPT', 'TOO_LARGE', 'MALFORMED']);

function realBatch(): { manifest: BatchManifest; wire: Uint8Array } {
  const bytes = (text: string): Uint8Array => new TextEncoder().encode(text);
  const page: BatchPart = { url: PAGE, status: 200, headers: [['content-type', 'text/html']], body: bytes('<img src=a.png><img src=b.png>') };
  const parts: BatchPart[] = [
    { url: `${A}/a.png`, status: 200, headers: [['content-type', 'image/png']], body: new Uint8Array(300).fill(3), validator: '"a1"' },
    { url: `${A}/b.png`, status: 200, headers: [['cache-control', 'max-age=60']], body: new Uint8Array(2_000).fill(9) },
    { url: `${A}/c.css`, status: 200, headers: [], body: bytes('h1{color:red}') },
  ];
  const manifest: BatchManifest = { page: PAGE, parts: [...parts.map((part) => part.url), `${A}/missing.js`], cached: [[`${A}/d.png`, '"d"']] };
  return { manifest, wire: encodeBatch(manifest, [page, ...parts], [`${A}/missing.js`]) };
}
const batch = realBatch();

/** Frames a reader yields must respect the stream's own promises, whatever the input. */
function expectConsistent(frames: readonly BatchFrame[]): void {
  const manifest = frames[0]?.type === 'manifest' ? frames[0].manifest : undefined;
  if (frames.length > 0) expect(frames[0]?.type).toBe('manifest');
  const seen = new Set<string>();
  for (const frame of frames.slice(1)) {
    expect(frame.type).not.toBe('manifest');
    if (frame.type !== 'part') continue;
    // The page first, then only announced parts, each once.
    expect(manifest === undefined || frame.part.url === manifest.page || manifest.parts.includes(frame.part.url)).toBe(true);
    expect(seen.has(frame.part.url)).toBe(false);
    seen.add(frame.part.url);
  }
}

/** Pushes the chunks and ends; returns the frames and the error code, throwing anything else. */
function decodeChunks(chunks: readonly Uint8Array[]): { frames: BatchFrame[]; code: string | undefined } {
  const decoder = new BatchDecoder({ maxPartBytes: 64 * 1024, maxMetaBytes: 16 * 1024 });
  const frames: BatchFrame[] = [];
  try {
    for (const piece of chunks) frames.push(...decoder.push(piece));
    decoder.end();
    return { frames, code: undefined };
  } catch (error) {
    if (!(error instanceof BatchFormatError)) throw error;
    expect(BATCH_CODES.has(error.code)).toBe(true);
    // A failed decoder stays failed with the same error: no state change after a rejection.
    expect(() => decoder.push(new Uint8Array([1]))).toThrow(error);
    return { frames, code: error.code };
  }
}

describe('fuzz: batch framing reader', () => {
  const chunkSizes = fc.array(fc.integer({ min: 1, max: 700 }), { maxLength: 30 });

  it('reads the real batch in any chunking', () => {
    fc.assert(
      fc.property(chunkSizes, (sizes) => {
        const { frames, code } = decodeChunks(chunk(batch.wire, sizes));
        expect(code).toBeUndefined();
        expect(frames.map((frame) => frame.type)).toEqual(['manifest', 'part', 'part', 'part', 'part', 'end']);
      }),
      runs(100),
    );
  });

  it('never throws anything but a coded BatchFormatError on mutated batches, in random chunkings', () => {
    fc.assert(
      fc.property(fc.array(editArb, { minLength: 1, maxLength: 5 }), chunkSizes, (edits, sizes) => {
        const { frames } = decodeChunks(chunk(mutateBytes(batch.wire, edits), sizes));
        expectConsistent(frames);
      }),
      runs(500),
    );
  });

  it('never throws anything but a coded BatchFormatError on random bytes (with and without the preamble)', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 2_000 }), fc.boolean(), chunkSizes, (bytes, withPreamble, sizes) => {
        const input = withPreamble ? Uint8Array.from([...BATCH_PREAMBLE, ...bytes]) : bytes;
        const { frames, code } = decodeChunks(chunk(input, sizes));
        expectConsistent(frames);
        if (!withPreamble && bytes.length >= BATCH_PREAMBLE.length) expect(code).toBeDefined();
      }),
      runs(400),
    );
  });

  it('readBatch over a stream settles (frames, or a coded error) for mutated input, and cancels the stream', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(editArb, { maxLength: 5 }), chunkSizes, async (edits, sizes) => {
        const chunks = chunk(mutateBytes(batch.wire, edits), sizes);
        let cancelled = false;
        let index = 0;
        const stream = new ReadableStream<Uint8Array>({
          pull(controller) {
            if (index < chunks.length) controller.enqueue(chunks[index++]!);
            else controller.close();
          },
          cancel() {
            cancelled = true;
          },
        });
        const frames: BatchFrame[] = [];
        let code: string | undefined;
        try {
          for await (const frame of readBatch(stream, { maxPartBytes: 64 * 1024 })) frames.push(frame);
        } catch (error) {
          if (!(error instanceof BatchFormatError)) throw error;
          code = error.code;
        }
        expectConsistent(frames);
        if (code !== undefined) {
          expect(BATCH_CODES.has(code)).toBe(true);
          // Stopped early on an error: the rest of the stream is not read.
          expect(cancelled || index === chunks.length).toBe(true);
        }
      }),
      runs(150),
    );
  });
});

// ------------------------------------------------------------------ cache digest

const DIGEST_CODES = new Set(['EMPTY', 'TOO_LARGE', 'UNSUPPORTED_VERSION', 'MALFORMED']);
const realDigests = [1, 8, 16].map(
  (p) => encodeCacheDigest(Array.from({ length: 50 }, (_, i) => ({ url: `${A}/img/${i}.png`, validator: `"v${i}"` })), { falsePositiveLog2: p }).value,
);

function checkDigest(value: string): void {
  let result!: ReturnType<typeof decodeCacheDigest>;
  expect(() => (result = decodeCacheDigest(value))).not.toThrow();
  if (result.ok) expect(typeof result.digest.has(`${A}/img/1.png`, '"v1"')).toBe('boolean');
  else expect(DIGEST_CODES.has(result.error.code)).toBe(true);
}

describe('fuzz: cache-digest reader', () => {
  it('never throws on random strings, or on random bodies behind a valid header (any N and p)', () => {
    fc.assert(
      fc.property(
        fc.string({ maxLength: 300 }),
        fc.nat({ max: 255 }),
        fc.nat({ max: 255 }),
        fc.uint8Array({ maxLength: 600 }),
        (text, nLog2, p, body) => {
          checkDigest(text);
          checkDigest(Buffer.from(Uint8Array.from([1, nLog2, p, ...body])).toString('base64url'));
        },
      ),
      runs(400),
    );
  });

  it('never throws on mutations of real digests', () => {
    fc.assert(
      fc.property(fc.constantFrom(...realDigests), fc.array(editArb, { minLength: 1, maxLength: 4 }), (digest, edits) => {
        checkDigest(mutateText(digest, edits));
        // Mutated at the byte level, then re-encoded: always valid base64url, so the Golomb decoder runs.
        checkDigest(Buffer.from(mutateBytes(Buffer.from(digest, 'base64url'), edits)).toString('base64url'));
      }),
      runs(400),
    );
  });
});
