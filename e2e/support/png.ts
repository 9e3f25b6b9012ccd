/**
 * Tiny RGB PNGs written by hand for tests and benchmarks: no image library, and every
 * image is distinct on demand.
 */
import { randomBytes } from 'node:crypto';
import { deflateSync } from 'node:zlib';
import { crc32 } from '@webpp/core';

const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

function pngChunk(type: string, data: Buffer): Buffer {
  const typed = Buffer.concat([Buffer.from(type, 'latin1'), data]);
  const out = Buffer.alloc(8 + data.length + 4);
  out.writeUInt32BE(data.length, 0);
  typed.copy(out, 4);
  out.writeUInt32BE(crc32(typed), 8 + data.length);
  return out;
}

/** An 8-bit RGB PNG from its rows of `width * 3` bytes each. */
export function rgbPng(width: number, rows: readonly Buffer[], deflateLevel?: number): Buffer {
  const header = Buffer.alloc(13);
  header.writeUInt32BE(width, 0);
  header.writeUInt32BE(rows.length, 4);
  header.set([8, 2, 0, 0, 0], 8); // bit depth 8, colour type 2 (RGB)
  const filtered = Buffer.concat(rows.map((row) => Buffer.concat([Buffer.from([0]), row])));
  const idat = deflateLevel === undefined ? deflateSync(filtered) : deflateSync(filtered, { level: deflateLevel });
  return Buffer.concat([PNG_SIGNATURE, pngChunk('IHDR', header), pngChunk('IDAT', idat), pngChunk('IEND', Buffer.alloc(0))]);
}

/** A solid-colour square PNG. */
export function solidPng(rgb: readonly [number, number, number], sizePx = 16): Buffer {
  const row = Buffer.from(Array.from({ length: sizePx }, () => [...rgb]).flat());
  return rgbPng(sizePx, Array.from({ length: sizePx }, () => row));
}

/** A PNG of random RGB noise (incompressible, like a photo). */
export function noisePng(width: number, height: number): Buffer {
  return rgbPng(width, Array.from({ length: height }, () => randomBytes(width * 3)), 1);
}
