import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { BATCH_PREAMBLE } from '../src/batch/format.js';
import { encodeBatch } from '../src/batch/encode.js';
import {
  BatchDecoder,
  BatchFormatError,
  concatBytes,
  encodeBatchPreamble,
  encodeEndFrame,
  encodeManifestFrame,
  encodePartFrame,
  readBatch,
  type BatchFrame,
  type BatchManifest,
  type BatchPart,
} from '../src/batch/index.js';

const PAGE = 'http://a.localhost:8081/index.html';
const bytes = (text: string): Uint8Array => new TextEncoder().encode(text);

function samplePart(path: string, body: Uint8Array, validator?: string): BatchPart {
  const part: BatchPart = {
    url: `http://a.localhost:8081${path}`,
    status: 200,
    headers: [
      ['content-type', 'image/png'],
      ['cache-control', 'max-age=60'],
    ],
    body,
  };
  if (validator !== undefined) part.validator = validator;
  return part;
}

function sampleBatch(): { manifest: BatchManifest; parts: BatchPart[]; wire: Uint8Array } {
  const page: BatchPart = { url: PAGE, status: 200, headers: [['content-type', 'text/html']], body: bytes('<img src=a.png>') };
  const images = [samplePart('/a.png', new Uint8Array([1, 2, 3]), '"a1"'), samplePart('/b.png', new Uint8Array(5000).fill(7))];
  const manifest: BatchManifest = {
    page: PAGE,
    parts: images.map((part) => part.url),
    cached: [['http://a.localhost:8081/c.png', '"c9"']],
  };
  const parts = [page, ...images];
  return { manifest, parts, wire: encodeBatch(manifest, parts) };
}

function decodeAll(wire: Uint8Array, chunkSize: number): BatchFrame[] {
  const decoder = new BatchDecoder();
  const frames: BatchFrame[] = [];
  for (let offset = 0; offset < wire.length; offset += chunkSize) {
    frames.push(...decoder.push(wire.subarray(offset, offset + chunkSize)));
  }
  decoder.end();
  return frames;
}

function codeOf(run: () => unknown): string | undefined {
  try {
    run();
  } catch (error) {
    if (error instanceof BatchFormatError) return error.code;
    throw error;
  }
  return undefined;
}

/** A ReadableStream that delivers `wire` in the given chunk sizes, like a network would. */
function streamOf(wire: Uint8Array, chunkSize: number, failAfterBytes?: number): ReadableStream<Uint8Array> {
  let offset = 0;
  return new ReadableStream<Uint8Array>({
    pull(controller) {
      if (failAfterBytes !== undefined && offset >= failAfterBytes) {
        controller.error(new TypeError('network error'));
        return;
      }
      if (offset >= wire.length) {
        controller.close();
        return;
      }
      const end = Math.min(wire.length, offset + chunkSize, failAfterBytes ?? Infinity);
      controller.enqueue(wire.slice(offset, end));
      offset = end;
    },
  });
}

describe('batch framing', () => {
  it('round-trips a page and its parts, in order, whatever the chunking', () => {
    const { manifest, parts, wire } = sampleBatch();
    for (const chunkSize of [1, 3, 13, 64, wire.length]) {
      const frames = decodeAll(wire, chunkSize);
      expect(frames.map((frame) => frame.type)).toEqual(['manifest', 'part', 'part', 'part', 'end']);
      expect(frames[0]).toEqual({ type: 'manifest', manifest });
      const decodedParts = frames.flatMap((frame) => (frame.type === 'part' ? [frame.part] : []));
      expect(decodedParts.map((part) => ({ ...part, body: [...part.body] }))).toEqual(
        parts.map((part) => ({ ...part, body: [...part.body] })),
      );
      expect(frames[4]).toEqual({ type: 'end', end: { sentParts: 3, missing: [] } });
    }
  });

  it('yields the page as soon as its frame is complete, before later parts arrive', () => {
    const { wire } = sampleBatch();
    const decoder = new BatchDecoder();
    const prefix = concatBytes([
      encodeBatchPreamble(),
      ...encodeManifestFrame({ page: PAGE, parts: ['http://a.localhost:8081/a.png'], cached: [] }),
      ...encodePartFrame({ url: PAGE, status: 200, headers: [] }, bytes('<p>hi')),
    ]);
    const frames = decoder.push(prefix);
    expect(frames.map((frame) => frame.type)).toEqual(['manifest', 'part']);
    expect(wire.length).toBeGreaterThan(prefix.length);
  });

  it('round-trips arbitrary parts (property)', () => {
    const pathArb = fc.stringMatching(/^\/[a-z0-9/_.-]{0,30}$/);
    // eslint-disable-next-line no-control-regex -- header values without control characters
    const headerArb = fc.tuple(fc.stringMatching(/^[a-z][a-z0-9-]{0,15}$/), fc.string({ maxLength: 40 }).filter((v) => !/[\r\n\0-\x08\x0a-\x1f\x7f]/.test(v)));
    const partArb = fc.record({
      path: pathArb,
      headers: fc.array(headerArb, { maxLength: 5 }),
      body: fc.uint8Array({ maxLength: 3000 }),
      validator: fc.option(fc.stringMatching(/^[\x21-\x7e]{1,20}$/), { nil: undefined }),
    });
    fc.assert(
      fc.property(fc.uniqueArray(partArb, { selector: (part) => new URL(`http://b.localhost:9000/r${part.path}`).href, maxLength: 8 }), fc.integer({ min: 1, max: 700 }), (specs, chunkSize) => {
        const parts: BatchPart[] = specs.map((spec) => {
          // Decoded URLs are normalised (WHATWG), e.g. "/r/." becomes "/r/".
          const url = new URL(`http://b.localhost:9000/r${spec.path}`).href;
          const part: BatchPart = { url, status: 200, headers: spec.headers, body: spec.body };
          if (spec.validator !== undefined) part.validator = spec.validator;
          return part;
        });
        const page: BatchPart = { url: PAGE, status: 200, headers: [], body: bytes('page') };
        const manifest: BatchManifest = { page: PAGE, parts: parts.map((part) => part.url), cached: [] };
        const frames = decodeAll(encodeBatch(manifest, [page, ...parts]), chunkSize);
        const decoded = frames.flatMap((frame) => (frame.type === 'part' ? [frame.part] : []));
        expect(decoded.slice(1).map((part) => ({ ...part, body: [...part.body] }))).toEqual(
          parts.map((part) => ({ ...part, body: [...part.body] })),
        );
      }),
      { numRuns: 150 },
    );
  });

  it('reports TRUNCATED for a stream cut anywhere before the end frame', () => {
    const { wire } = sampleBatch();
    fc.assert(
      fc.property(fc.integer({ min: 0, max: wire.length - 1 }), (cut) => {
        const decoder = new BatchDecoder();
        const frames = decoder.push(wire.subarray(0, cut));
        expect(frames.some((frame) => frame.type === 'end')).toBe(false);
        expect(codeOf(() => decoder.end())).toBe('TRUNCATED');
      }),
      { numRuns: 300 },
    );
  });

  it('never yields a part whose bytes were damaged, and never hangs on damage (property)', () => {
    const { wire, parts } = sampleBatch();
    fc.assert(
      fc.property(fc.integer({ min: BATCH_PREAMBLE.length, max: wire.length - 1 }), fc.integer({ min: 1, max: 255 }), (index, flip) => {
        const damaged = wire.slice();
        damaged[index] = damaged[index]! ^ flip;
        const decoder = new BatchDecoder();
        let frames: BatchFrame[] = [];
        let code: string | undefined;
        try {
          frames = decoder.push(damaged);
          decoder.end();
        } catch (error) {
          if (!(error instanceof BatchFormatError)) throw error;
          code = error.code;
        }
        const intact = new Map(parts.map((part) => [part.url, [...part.body]]));
        for (const frame of frames) {
          if (frame.type === 'part') expect([...frame.part.body]).toEqual(intact.get(frame.part.url));
        }
        // Damage is always noticed: either a fatal error or a corrupt-part report.
        expect(code !== undefined || frames.some((frame) => frame.type === 'corrupt-part')).toBe(true);
      }),
      { numRuns: 400 },
    );
  });

  it('reports a damaged body as one corrupt part and carries on with the next parts', () => {
    const { wire } = sampleBatch();
    const damaged = wire.slice();
    // The last byte of the 5000-byte body of b.png, just before its CRC and the end frame.
    const endFrameLength = concatBytes(encodeEndFrame({ sentParts: 3, missing: [] })).length;
    const index = wire.length - endFrameLength - 4 - 1;
    damaged[index] = damaged[index]! ^ 0xff;
    const frames = decodeAll(damaged, 100);
    expect(frames.map((frame) => frame.type)).toEqual(['manifest', 'part', 'part', 'corrupt-part', 'end']);
    expect(frames[3]).toMatchObject({ type: 'corrupt-part', url: 'http://a.localhost:8081/b.png' });
  });

  it('rejects a stream that is not a batch at its first byte', () => {
    const decoder = new BatchDecoder();
    expect(codeOf(() => decoder.push(bytes('<!doctype html>')))).toBe('BAD_PREAMBLE');
  });

  it('rejects protocol violations as MALFORMED', () => {
    const manifest: BatchManifest = { page: PAGE, parts: ['http://a.localhost:8081/a.png'], cached: [] };
    const page = { url: PAGE, status: 200, headers: [], body: bytes('x') };
    const image = samplePart('/a.png', bytes('png'));
    const cases: Uint8Array[][] = [
      // A part before the manifest.
      [encodeBatchPreamble(), ...encodePartFrame(page, page.body)],
      // The first part is not the page.
      [encodeBatchPreamble(), ...encodeManifestFrame(manifest), ...encodePartFrame(image, image.body)],
      // A part that was not announced.
      [encodeBatchPreamble(), ...encodeManifestFrame({ ...manifest, parts: [] }), ...encodePartFrame(page, page.body), ...encodePartFrame(image, image.body)],
      // A part sent twice.
      [encodeBatchPreamble(), ...encodeManifestFrame(manifest), ...encodePartFrame(page, page.body), ...encodePartFrame(image, image.body), ...encodePartFrame(image, image.body)],
      // An end frame that miscounts.
      [encodeBatchPreamble(), ...encodeManifestFrame(manifest), ...encodePartFrame(page, page.body), ...encodeEndFrame({ sentParts: 2, missing: [] })],
      // A relative URL.
      [encodeBatchPreamble(), ...encodeManifestFrame({ ...manifest, page: '/index.html' })],
      // A non-2xx part.
      [encodeBatchPreamble(), ...encodeManifestFrame(manifest), ...encodePartFrame({ ...page, status: 500 }, page.body)],
      // A header value with a line break (header injection).
      [encodeBatchPreamble(), ...encodeManifestFrame(manifest), ...encodePartFrame({ ...page, headers: [['x', 'a\r\nb']] }, page.body)],
      // Bytes after the end frame.
      [encodeBatch(manifest, [page, image]), bytes('!')],
    ];
    for (const chunks of cases) {
      const decoder = new BatchDecoder();
      expect(codeOf(() => decoder.push(concatBytes(chunks)))).toBe('MALFORMED');
    }
  });

  it('bounds meta and body sizes before reading them', () => {
    const { wire } = sampleBatch();
    expect(codeOf(() => new BatchDecoder({ maxPartBytes: 1000 }).push(wire))).toBe('TOO_LARGE');
    expect(codeOf(() => new BatchDecoder({ maxMetaBytes: 10 }).push(wire))).toBe('TOO_LARGE');
    expect(codeOf(() => new BatchDecoder({ maxParts: 1 }).push(wire))).toBe('TOO_LARGE');
  });

  it('stays failed after a fatal error', () => {
    const decoder = new BatchDecoder();
    expect(codeOf(() => decoder.push(bytes('nope')))).toBe('BAD_PREAMBLE');
    expect(codeOf(() => decoder.push(encodeBatchPreamble()))).toBe('BAD_PREAMBLE');
  });

  it('reports announced-but-missing parts from the end frame', () => {
    const manifest: BatchManifest = { page: PAGE, parts: ['http://a.localhost:8081/gone.png'], cached: [] };
    const wire = encodeBatch(manifest, [{ url: PAGE, status: 200, headers: [], body: bytes('x') }], ['http://a.localhost:8081/gone.png']);
    const frames = decodeAll(wire, 7);
    expect(frames.at(-1)).toEqual({ type: 'end', end: { sentParts: 1, missing: ['http://a.localhost:8081/gone.png'] } });
  });
});

describe('readBatch over a ReadableStream', () => {
  it('yields every frame of a complete stream', async () => {
    const { wire } = sampleBatch();
    const types: string[] = [];
    for await (const frame of readBatch(streamOf(wire, 17))) types.push(frame.type);
    expect(types).toEqual(['manifest', 'part', 'part', 'part', 'end']);
  });

  it('yields the complete frames, then TRUNCATED, when the network fails mid-stream', async () => {
    const { wire } = sampleBatch();
    const types: string[] = [];
    let failure: unknown;
    try {
      for await (const frame of readBatch(streamOf(wire, 50, Math.floor(wire.length / 2)))) types.push(frame.type);
    } catch (error) {
      failure = error;
    }
    expect(failure).toBeInstanceOf(BatchFormatError);
    expect((failure as BatchFormatError).code).toBe('TRUNCATED');
    expect((failure as BatchFormatError).message).toMatch(/network error/);
    expect(types).toEqual(['manifest', 'part', 'part']);
  });

  it('reports TRUNCATED when the stream closes early', async () => {
    const { wire } = sampleBatch();
    const iterate = async (): Promise<void> => {
      for await (const frame of readBatch(streamOf(wire.subarray(0, wire.length - 3), 64))) void frame;
    };
    await expect(iterate()).rejects.toMatchObject({ code: 'TRUNCATED' });
  });

  it('cancels the stream when the consumer stops early', async () => {
    const { wire } = sampleBatch();
    let cancelled = false;
    let offset = 0;
    const stream = new ReadableStream<Uint8Array>({
      pull(controller) {
        controller.enqueue(wire.slice(offset, offset + 10));
        offset += 10;
      },
      cancel() {
        cancelled = true;
      },
    });
    for await (const frame of readBatch(stream)) {
      if (frame.type === 'manifest') break;
    }
    expect(cancelled).toBe(true);
  });

  it('accepts any async iterable of chunks', async () => {
    const { wire } = sampleBatch();
    async function* chunks(): AsyncGenerator<Uint8Array> {
      for (let offset = 0; offset < wire.length; offset += 1000) yield wire.slice(offset, offset + 1000);
    }
    const types: string[] = [];
    for await (const frame of readBatch(chunks())) types.push(frame.type);
    expect(types).toEqual(['manifest', 'part', 'part', 'part', 'end']);
  });
});
