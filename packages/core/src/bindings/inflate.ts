/**
 * The two inflaters of a compressed bindings payload (raw DEFLATE, RFC 1951; docs/protocol.md),
 * one bounded contract: each stops once the output passes `maxBytes`, so a zip bomb cannot
 * exhaust memory, and each tells a truncated stream from a corrupt one.
 *  - inflateRawSync: fflate, synchronous (Node: the origin's tools, the simulator, tests);
 *  - inflateRawNative: the platform's DecompressionStream('deflate-raw') (Chromium 103+,
 *    Node 21.2+), asynchronous. The worker uses it, so its bundle carries no inflater.
 */
import { Inflate } from 'fflate';

export type InflateResult =
  | { ok: true; bytes: Uint8Array }
  | { ok: false; reason: 'overflow' | 'truncated' | 'corrupt'; message: string };

/** Input fed per step: at most ~0.5 MB of output per step, however the input is crafted. */
const CHUNK_BYTES = 512;

const overflow = (maxBytes: number): InflateResult => ({ ok: false, reason: 'overflow', message: `inflates beyond ${maxBytes} bytes` });

export function inflateRawSync(input: Uint8Array, maxBytes: number): InflateResult {
  if (input.length === 0) return { ok: false, reason: 'truncated', message: 'no compressed bytes' };
  const output = new Uint8Array(maxBytes);
  let written = 0;
  let over = false;
  let ended = false;
  const inflater = new Inflate((chunk, final) => {
    if (written + chunk.length > maxBytes) over = true;
    else output.set(chunk, written);
    written += chunk.length;
    if (final) ended = true;
  });
  try {
    for (let offset = 0; offset < input.length && !over; offset += CHUNK_BYTES) {
      const end = Math.min(input.length, offset + CHUNK_BYTES);
      inflater.push(input.subarray(offset, end), end === input.length);
    }
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    return { ok: false, reason: /unexpected EOF/i.test(message) ? 'truncated' : 'corrupt', message };
  }
  if (over) return overflow(maxBytes);
  if (!ended) return { ok: false, reason: 'truncated', message: 'ends early' };
  return { ok: true, bytes: output.subarray(0, written) };
}

/** The part of the Compression Streams API used here (core is built without the DOM library). */
interface ByteTransform {
  readonly writable: { getWriter(): { write(chunk: Uint8Array): Promise<void>; close(): Promise<void> } };
  readonly readable: { getReader(): { read(): Promise<{ done: boolean; value?: Uint8Array }>; cancel(): Promise<void> } };
}
type DecompressionStreamClass = new (format: 'deflate-raw') => ByteTransform;

/**
 * Chromium says "Compressed input was truncated."; Node 20 (zlib) "unexpected end of file";
 * Node 22 and 24 throw a TypeError with no message and zlib's code Z_BUF_ERROR (the input
 * ended before the stream did).
 */
const TRUNCATED_MESSAGE = /truncat|unexpected end/i;
const TRUNCATED_CODE = 'Z_BUF_ERROR';

function isTruncation(failure: unknown, message: string): boolean {
  return TRUNCATED_MESSAGE.test(message) || (failure as { code?: unknown } | null)?.code === TRUNCATED_CODE;
}

export async function inflateRawNative(input: Uint8Array, maxBytes: number): Promise<InflateResult> {
  const Decompression = (globalThis as { DecompressionStream?: DecompressionStreamClass }).DecompressionStream;
  if (Decompression === undefined) return { ok: false, reason: 'corrupt', message: 'no DecompressionStream on this platform' };
  const stream = new Decompression('deflate-raw');
  const writer = stream.writable.getWriter();
  const reader = stream.readable.getReader();
  const output = new Uint8Array(maxBytes);
  let written = 0;
  let over = false;
  // Read while writing: the stream hands out what one written chunk inflates to before it takes the next.
  const reading = (async (): Promise<unknown> => {
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done || value === undefined) return undefined;
        if (written + value.length > maxBytes) {
          over = true;
          await reader.cancel().catch(() => undefined);
          return undefined;
        }
        output.set(value, written);
        written += value.length;
      }
    } catch (error) {
      return error;
    }
  })();
  let failure: unknown;
  try {
    for (let offset = 0; offset < input.length && !over; offset += CHUNK_BYTES) await writer.write(input.subarray(offset, offset + CHUNK_BYTES));
    if (!over) await writer.close();
  } catch (error) {
    failure = error;
  }
  failure = (await reading) ?? failure;
  if (over) return overflow(maxBytes);
  if (failure !== undefined) {
    const message = failure instanceof Error ? failure.message || failure.name : JSON.stringify(failure);
    return { ok: false, reason: isTruncation(failure, message) ? 'truncated' : 'corrupt', message };
  }
  return { ok: true, bytes: output.subarray(0, written) };
}
