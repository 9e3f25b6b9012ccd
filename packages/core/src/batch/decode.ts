import { strFromU8 } from 'fflate';
import { parseHttpUrl, withoutHash } from '../_private/whatwg-url.js';
import { MAX_VALIDATOR_LENGTH, VALIDATOR_PATTERN } from '../bindings/format.js';
import { ByteQueue } from './byte-queue.js';
import { crc32 } from './crc32.js';
import {
  BATCH_PREAMBLE,
  BatchFormatError,
  DEFAULT_MAX_META_BYTES,
  DEFAULT_MAX_PART_BYTES,
  DEFAULT_MAX_PARTS,
  FRAME_CRC_BYTES,
  FRAME_END,
  FRAME_HEAD_BYTES,
  FRAME_MANIFEST,
  FRAME_PART,
  type BatchEnd,
  type BatchErrorCode,
  type BatchFrame,
  type BatchManifest,
  type BatchPartMeta,
  type BatchReadOptions,
} from './format.js';

function fail(code: BatchErrorCode, message: string): never {
  throw new BatchFormatError(code, message);
}

const HEADER_NAME = /^[!#$%&'*+\-.^_`|~0-9a-z]+$/;
const HEADER_VALUE = /^[\t\x20-\x7e\x80-\uffff]*$/;
const MAX_HEADERS_PER_PART = 256;

type Stage = 'preamble' | 'head' | 'meta' | 'body' | 'done';

/**
 * Incremental batch parser: `push` network chunks in any sizes, get the frames that became
 * complete; `end` when the stream is over. Throws BatchFormatError (and stays failed) on a
 * fatal problem; frames returned before stay valid.
 *
 * Order enforced: preamble, manifest, the page's part, announced parts (each once), end.
 */
export class BatchDecoder {
  readonly #maxMetaBytes: number;
  readonly #maxPartBytes: number;
  readonly #maxParts: number;
  readonly #queue = new ByteQueue();
  #stage: Stage = 'preamble';
  #failure: BatchFormatError | undefined;
  #consumed = 0;
  // The frame being read.
  #frameType = 0;
  #metaLength = 0;
  #bodyLength = 0;
  #meta: unknown;
  #metaError: string | undefined;
  // What the stream announced and delivered so far.
  #manifest: BatchManifest | undefined;
  #announced = new Set<string>();
  #seen = new Set<string>();
  #frames = 0;

  constructor(options: BatchReadOptions = {}) {
    this.#maxMetaBytes = options.maxMetaBytes ?? DEFAULT_MAX_META_BYTES;
    this.#maxPartBytes = options.maxPartBytes ?? DEFAULT_MAX_PART_BYTES;
    this.#maxParts = options.maxParts ?? DEFAULT_MAX_PARTS;
  }

  /** True once the end frame has been read. */
  get done(): boolean {
    return this.#stage === 'done';
  }

  /** Bytes of the stream parsed so far (complete frames and the preamble). */
  get bytesConsumed(): number {
    return this.#consumed;
  }

  /** The manifest, once read. */
  get manifest(): BatchManifest | undefined {
    return this.#manifest;
  }

  push(chunk: Uint8Array): BatchFrame[] {
    if (this.#failure) throw this.#failure;
    if (this.#stage === 'done') {
      if (chunk.length > 0) this.#fail('MALFORMED', `${chunk.length} bytes after the end frame`);
      return [];
    }
    this.#queue.push(chunk);
    const frames: BatchFrame[] = [];
    try {
      for (let frame = this.#step(); frame !== null; frame = this.#step()) {
        if (frame !== undefined) frames.push(frame);
      }
    } catch (error) {
      if (error instanceof BatchFormatError) this.#failure = error;
      throw error;
    }
    return frames;
  }

  /** Declares the stream over; throws TRUNCATED unless the end frame was read. */
  end(): void {
    if (this.#failure) throw this.#failure;
    if (this.#stage === 'done') return;
    const where =
      this.#stage === 'preamble'
        ? 'in the preamble'
        : `in frame ${this.#frames + 1} (${this.#stage}), ${this.#queue.length} bytes of it received`;
    this.#fail('TRUNCATED', `batch stream ended ${where} after ${this.#consumed} complete bytes`);
  }

  #fail(code: BatchErrorCode, message: string): never {
    this.#failure = new BatchFormatError(code, message);
    throw this.#failure;
  }

  #take(n: number): Uint8Array {
    this.#consumed += n;
    return this.#queue.take(n);
  }

  /** Advances by one stage: a frame, undefined (progress, no frame) or null (needs bytes). */
  #step(): BatchFrame | undefined | null {
    switch (this.#stage) {
      case 'preamble':
        return this.#readPreamble();
      case 'head':
        return this.#readHead();
      case 'meta':
        return this.#readMeta();
      case 'body':
        return this.#readBody();
      case 'done':
        if (this.#queue.length > 0) this.#fail('MALFORMED', `${this.#queue.length} bytes after the end frame`);
        return null;
    }
  }

  #readPreamble(): undefined | null {
    const available = Math.min(this.#queue.length, BATCH_PREAMBLE.length);
    const bytes = this.#queue.peek(available);
    for (let i = 0; i < available; i++) {
      if (bytes[i] !== BATCH_PREAMBLE[i]) this.#fail('BAD_PREAMBLE', 'not a webpp batch stream (bad preamble)');
    }
    if (available < BATCH_PREAMBLE.length) return null;
    this.#take(BATCH_PREAMBLE.length);
    this.#stage = 'head';
    return undefined;
  }

  #readHead(): undefined | null {
    if (this.#queue.length < FRAME_HEAD_BYTES) return null;
    const head = this.#take(FRAME_HEAD_BYTES);
    const view = new DataView(head.buffer, head.byteOffset, head.byteLength);
    if (view.getUint32(9) !== crc32(head.subarray(0, 9))) {
      this.#fail('CORRUPT', `frame ${this.#frames + 1}: head checksum mismatch`);
    }
    this.#frameType = view.getUint8(0);
    this.#metaLength = view.getUint32(1);
    this.#bodyLength = view.getUint32(5);
    if (![FRAME_MANIFEST, FRAME_PART, FRAME_END].includes(this.#frameType)) {
      this.#fail('MALFORMED', `frame ${this.#frames + 1}: unknown frame type 0x${this.#frameType.toString(16)}`);
    }
    if (this.#metaLength > this.#maxMetaBytes) {
      this.#fail('TOO_LARGE', `frame ${this.#frames + 1}: meta of ${this.#metaLength} bytes exceeds ${this.#maxMetaBytes}`);
    }
    if (this.#bodyLength > this.#maxPartBytes) {
      this.#fail('TOO_LARGE', `frame ${this.#frames + 1}: body of ${this.#bodyLength} bytes exceeds ${this.#maxPartBytes}`);
    }
    if (this.#frameType !== FRAME_PART && this.#bodyLength !== 0) {
      this.#fail('MALFORMED', `frame ${this.#frames + 1}: only part frames have a body`);
    }
    this.#stage = 'meta';
    return undefined;
  }

  #readMeta(): undefined | null {
    if (this.#queue.length < this.#metaLength + FRAME_CRC_BYTES) return null;
    const metaBytes = this.#take(this.#metaLength);
    const expected = readU32(this.#take(FRAME_CRC_BYTES));
    this.#meta = undefined;
    this.#metaError = undefined;
    if (expected !== crc32(metaBytes)) {
      // The lengths are trustworthy (the head checksum passed), so one part can be skipped;
      // a damaged manifest or end frame leaves nothing to go on.
      if (this.#frameType !== FRAME_PART) this.#fail('CORRUPT', `frame ${this.#frames + 1}: meta checksum mismatch`);
      this.#metaError = 'meta checksum mismatch';
    } else {
      try {
        this.#meta = JSON.parse(strFromU8(metaBytes));
      } catch {
        this.#fail('MALFORMED', `frame ${this.#frames + 1}: meta is not UTF-8 JSON`);
      }
    }
    this.#stage = 'body';
    return undefined;
  }

  #readBody(): BatchFrame | null {
    if (this.#queue.length < this.#bodyLength + FRAME_CRC_BYTES) return null;
    const body = this.#take(this.#bodyLength);
    const bodyIntact = readU32(this.#take(FRAME_CRC_BYTES)) === crc32(body);
    this.#frames += 1;
    this.#stage = 'head';
    if (!bodyIntact && this.#frameType !== FRAME_PART) {
      this.#fail('CORRUPT', `frame ${this.#frames}: body checksum mismatch`);
    }
    switch (this.#frameType) {
      case FRAME_MANIFEST:
        return { type: 'manifest', manifest: this.#acceptManifest(this.#meta) };
      case FRAME_END:
        return { type: 'end', end: this.#acceptEnd(this.#meta) };
      default:
        return this.#acceptPart(body, bodyIntact);
    }
  }

  #acceptManifest(meta: unknown): BatchManifest {
    if (this.#manifest) this.#fail('MALFORMED', 'a second manifest');
    if (!isRecord(meta)) this.#fail('MALFORMED', 'manifest is not an object');
    const page = checkUrl(meta.page, 'manifest page');
    if (!Array.isArray(meta.parts)) this.#fail('MALFORMED', 'manifest parts is not an array');
    if (meta.parts.length > this.#maxParts) {
      this.#fail('TOO_LARGE', `manifest announces ${meta.parts.length} parts, more than ${this.#maxParts}`);
    }
    const parts = meta.parts.map((url) => checkUrl(url, 'manifest part'));
    const announced = new Set(parts);
    if (announced.size !== parts.length || announced.has(page)) {
      this.#fail('MALFORMED', 'manifest announces a part twice');
    }
    const cachedInput = meta.cached ?? [];
    if (!Array.isArray(cachedInput)) this.#fail('MALFORMED', 'manifest cached is not an array');
    const cached = cachedInput.map((entry): [string, string] => {
      if (!Array.isArray(entry) || entry.length !== 2) this.#fail('MALFORMED', 'manifest cached entry is not [url, validator]');
      return [checkUrl(entry[0], 'manifest cached'), checkValidator(entry[1])];
    });
    this.#manifest = { page, parts, cached };
    this.#announced = announced;
    this.#announced.add(page);
    return this.#manifest;
  }

  #acceptPart(body: Uint8Array, bodyIntact: boolean): BatchFrame {
    const manifest = this.#manifest ?? this.#fail('MALFORMED', 'a part before the manifest');
    const pageFirst = this.#seen.size === 0;
    if (this.#metaError !== undefined) {
      this.#seen.add(`#corrupt-${this.#frames}`);
      return { type: 'corrupt-part', reason: this.#metaError };
    }
    const meta = checkPartMeta(this.#meta);
    if (pageFirst ? meta.url !== manifest.page : !this.#announced.has(meta.url) || meta.url === manifest.page) {
      this.#fail('MALFORMED', pageFirst ? 'the first part is not the page' : `part ${meta.url} was not announced`);
    }
    if (this.#seen.has(meta.url)) this.#fail('MALFORMED', `part ${meta.url} sent twice`);
    this.#seen.add(meta.url);
    if (!bodyIntact) return { type: 'corrupt-part', url: meta.url, reason: 'body checksum mismatch' };
    return { type: 'part', part: { ...meta, body } };
  }

  #acceptEnd(meta: unknown): BatchEnd {
    if (!this.#manifest) this.#fail('MALFORMED', 'end frame before the manifest');
    if (!isRecord(meta)) this.#fail('MALFORMED', 'end frame is not an object');
    if (meta.sentParts !== this.#seen.size) {
      this.#fail('MALFORMED', `end frame counts ${String(meta.sentParts)} parts, ${this.#seen.size} arrived`);
    }
    if (!Array.isArray(meta.missing)) this.#fail('MALFORMED', 'end frame missing is not an array');
    const missing = meta.missing.map((url) => checkUrl(url, 'end frame missing'));
    this.#stage = 'done';
    return { sentParts: this.#seen.size, missing };
  }
}

function readU32(bytes: Uint8Array): number {
  return ((bytes[0]! << 24) | (bytes[1]! << 16) | (bytes[2]! << 8) | bytes[3]!) >>> 0;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function checkUrl(value: unknown, what: string): string {
  const parsed = typeof value === 'string' ? parseHttpUrl(value) : undefined;
  if (!parsed) fail('MALFORMED', `${what} is not an absolute http(s) URL: ${JSON.stringify(value)?.slice(0, 200)}`);
  return withoutHash(parsed);
}

function checkValidator(value: unknown): string {
  if (typeof value !== 'string' || value.length > MAX_VALIDATOR_LENGTH || !VALIDATOR_PATTERN.test(value)) {
    fail('MALFORMED', `bad validator ${JSON.stringify(value)?.slice(0, 200)}`);
  }
  return value;
}

function checkPartMeta(meta: unknown): BatchPartMeta {
  if (!isRecord(meta)) fail('MALFORMED', 'part meta is not an object');
  const url = checkUrl(meta.url, 'part url');
  const status = meta.status;
  if (typeof status !== 'number' || !Number.isInteger(status) || status < 200 || status > 299) {
    fail('MALFORMED', `part ${url}: status ${String(status)} is not 2xx`);
  }
  if (!Array.isArray(meta.headers) || meta.headers.length > MAX_HEADERS_PER_PART) {
    fail('MALFORMED', `part ${url}: headers is not an array of at most ${MAX_HEADERS_PER_PART}`);
  }
  const headers = meta.headers.map((entry): [string, string] => {
    if (
      !Array.isArray(entry) ||
      entry.length !== 2 ||
      typeof entry[0] !== 'string' ||
      typeof entry[1] !== 'string' ||
      !HEADER_NAME.test(entry[0]) ||
      !HEADER_VALUE.test(entry[1])
    ) {
      fail('MALFORMED', `part ${url}: bad header ${JSON.stringify(entry)?.slice(0, 200)}`);
    }
    return [entry[0], entry[1]];
  });
  const result: BatchPartMeta = { url, status, headers };
  if (meta.validator !== undefined) result.validator = checkValidator(meta.validator);
  return result;
}

/** A reader as returned by `ReadableStream.getReader()`, typed structurally (no DOM lib here). */
export interface ByteStreamReader {
  read(): Promise<{ done: boolean; value?: Uint8Array | undefined }>;
  cancel(reason?: unknown): Promise<void>;
  releaseLock?(): void;
}

/** A `ReadableStream<Uint8Array>` (browser, worker or Node), or any async iterable of chunks. */
export type ByteSource = { getReader(): ByteStreamReader } | AsyncIterable<Uint8Array>;

/**
 * Reads a batch from a stream, yielding each frame as soon as it is complete. Throws
 * BatchFormatError: TRUNCATED when the stream ends early or fails (a network error), CORRUPT,
 * TOO_LARGE, MALFORMED or BAD_PREAMBLE otherwise. The stream is cancelled on any error and
 * when the consumer stops early.
 */
export async function* readBatch(source: ByteSource, options: BatchReadOptions = {}): AsyncGenerator<BatchFrame, void, void> {
  const decoder = new BatchDecoder(options);
  if ('getReader' in source) {
    const reader = source.getReader();
    let finished = false;
    try {
      for (;;) {
        let result: { done: boolean; value?: Uint8Array | undefined };
        try {
          result = await reader.read();
        } catch (error) {
          throw streamFailure(decoder, error);
        }
        if (result.done) break;
        if (result.value) yield* decoder.push(result.value);
      }
      decoder.end();
      finished = true;
    } finally {
      if (!finished) await reader.cancel().catch(() => undefined);
      reader.releaseLock?.();
    }
    return;
  }
  try {
    for await (const chunk of source) yield* decoder.push(chunk);
  } catch (error) {
    if (error instanceof BatchFormatError) throw error;
    throw streamFailure(decoder, error);
  }
  decoder.end();
}

function streamFailure(decoder: BatchDecoder, error: unknown): BatchFormatError {
  const failure = new BatchFormatError(
    'TRUNCATED',
    `batch stream failed after ${decoder.bytesConsumed} bytes: ${error instanceof Error ? error.message : String(error)}`,
  );
  (failure as { cause?: unknown }).cause = error;
  return failure;
}
