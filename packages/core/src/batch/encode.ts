import { strToU8 } from 'fflate';
import { crc32 } from './crc32.js';
import {
  BATCH_PREAMBLE,
  FRAME_CRC_BYTES,
  FRAME_END,
  FRAME_HEAD_BYTES,
  FRAME_MANIFEST,
  FRAME_PART,
  type BatchEnd,
  type BatchManifest,
  type BatchPartMeta,
} from './format.js';

const MAX_U32 = 0xffffffff;

function crcBytes(value: number): Uint8Array {
  const out = new Uint8Array(FRAME_CRC_BYTES);
  new DataView(out.buffer).setUint32(0, value);
  return out;
}

/**
 * Writes one frame (layout in format.ts). Returns it as chunks so that a large body is never
 * copied: [head + meta + metaCrc, body, bodyCrc]; the body chunk is omitted when empty.
 */
function encodeFrame(type: number, meta: unknown, body?: Uint8Array): Uint8Array[] {
  const metaBytes = strToU8(JSON.stringify(meta));
  const bodyLength = body?.length ?? 0;
  if (metaBytes.length > MAX_U32 || bodyLength > MAX_U32) throw new RangeError('batch frame larger than 4 GiB');
  const head = new Uint8Array(FRAME_HEAD_BYTES + metaBytes.length + FRAME_CRC_BYTES);
  const view = new DataView(head.buffer);
  view.setUint8(0, type);
  view.setUint32(1, metaBytes.length);
  view.setUint32(5, bodyLength);
  view.setUint32(9, crc32(head.subarray(0, 9)));
  head.set(metaBytes, FRAME_HEAD_BYTES);
  view.setUint32(FRAME_HEAD_BYTES + metaBytes.length, crc32(metaBytes));
  const tail = crcBytes(body ? crc32(body) : crc32());
  return body && bodyLength > 0 ? [head, body, tail] : [head, tail];
}

/** The first bytes of every batch stream. */
export function encodeBatchPreamble(): Uint8Array {
  return BATCH_PREAMBLE.slice();
}

export function encodeManifestFrame(manifest: BatchManifest): Uint8Array[] {
  return encodeFrame(FRAME_MANIFEST, { page: manifest.page, parts: manifest.parts, cached: manifest.cached });
}

/** A part: the page first, then each embedded resource. */
export function encodePartFrame(meta: BatchPartMeta, body: Uint8Array): Uint8Array[] {
  const wireMeta: BatchPartMeta = { url: meta.url, status: meta.status, headers: meta.headers };
  if (meta.validator !== undefined) wireMeta.validator = meta.validator;
  return encodeFrame(FRAME_PART, wireMeta, body);
}

export function encodeEndFrame(end: BatchEnd): Uint8Array[] {
  return encodeFrame(FRAME_END, { sentParts: end.sentParts, missing: end.missing });
}

/** Concatenates chunks into one array. */
export function concatBytes(chunks: readonly Uint8Array[]): Uint8Array {
  let length = 0;
  for (const chunk of chunks) length += chunk.length;
  const out = new Uint8Array(length);
  let offset = 0;
  for (const chunk of chunks) {
    out.set(chunk, offset);
    offset += chunk.length;
  }
  return out;
}

/**
 * A whole batch in one array, for tests and small pages. Servers stream instead: preamble,
 * manifest, then each part as it is read, then the end frame.
 */
export function encodeBatch(
  manifest: BatchManifest,
  parts: ReadonlyArray<BatchPartMeta & { body: Uint8Array }>,
  missing: string[] = [],
): Uint8Array {
  const chunks: Uint8Array[] = [encodeBatchPreamble(), ...encodeManifestFrame(manifest)];
  for (const part of parts) chunks.push(...encodePartFrame(part, part.body));
  chunks.push(...encodeEndFrame({ sentParts: parts.length, missing }));
  return concatBytes(chunks);
}
