/**
 * Reading a Fastify onSend payload (string, Buffer or stream) into memory, with a bound:
 * a body larger than the bound is handed back as a stream that replays what was read and
 * continues with the rest, so nothing is lost and nothing is buffered without limit.
 */
import { Readable } from 'node:stream';

export type BufferedPayload = { complete: true; body: Buffer } | { complete: false; stream: Readable };

export function isStream(payload: unknown): payload is Readable {
  return payload !== null && typeof payload === 'object' && typeof (payload as Readable).pipe === 'function';
}

export async function bufferPayload(payload: unknown, maxBytes: number): Promise<BufferedPayload | undefined> {
  if (typeof payload === 'string') return { complete: true, body: Buffer.from(payload) };
  if (Buffer.isBuffer(payload)) return { complete: true, body: payload };
  if (payload instanceof Uint8Array) return { complete: true, body: Buffer.from(payload.buffer, payload.byteOffset, payload.byteLength) };
  if (!isStream(payload)) return undefined;
  const chunks: Buffer[] = [];
  let bytes = 0;
  const iterator = payload[Symbol.asyncIterator]();
  for (;;) {
    const next = await iterator.next();
    if (next.done === true) return { complete: true, body: Buffer.concat(chunks, bytes) };
    const chunk = typeof next.value === 'string' ? Buffer.from(next.value) : Buffer.from(next.value as Uint8Array);
    chunks.push(chunk);
    bytes += chunk.byteLength;
    if (bytes > maxBytes) {
      async function* replay(): AsyncGenerator<Buffer> {
        yield* chunks;
        for (;;) {
          const rest = await iterator.next();
          if (rest.done === true) return;
          yield typeof rest.value === 'string' ? Buffer.from(rest.value) : Buffer.from(rest.value as Uint8Array);
        }
      }
      return { complete: false, stream: Readable.from(replay(), { objectMode: false }) };
    }
  }
}

/** Releases a stream payload that is being replaced. */
export function discardPayload(payload: unknown): void {
  if (!isStream(payload)) return;
  // Destroying a body that has not ended makes some streams (undici's) emit an abort error:
  // expected here, and no one else listens to a discarded payload.
  payload.on('error', () => undefined);
  payload.destroy();
}
