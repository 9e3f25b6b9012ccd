/**
 * A media range answered by a replica on another origin is held whole, one bounded chunk at
 * a time (sw/src/media-range.ts; Chromium's behaviour itself is in e2e/tests/sw-media.spec.ts).
 */
import { describe, expect, it } from 'vitest';
import { buildPhysicalRequest } from '../src/physical-request.js';
import { boundedMediaRange, heldMediaChunk, mediaServedResponse } from '../src/media-range.js';

const signal = new AbortController().signal;

function mediaRequest(url: string, range: string): Request {
  const request = new Request(url, { headers: { range } });
  Object.defineProperty(request, 'mode', { value: 'no-cors' });
  Object.defineProperty(request, 'destination', { value: 'audio' });
  return request;
}

/** A 206 whose body comes in `parts`, the last one only after `stallMs` when given. */
function partial(parts: Uint8Array[], first: number, total: number, stallMs?: number): Response {
  const length = parts.reduce((sum, part) => sum + part.byteLength, 0);
  let index = 0;
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      if (index === parts.length) return controller.close();
      if (stallMs !== undefined && index === parts.length - 1) await new Promise((resolve) => setTimeout(resolve, stallMs));
      controller.enqueue(parts[index++]);
    },
  });
  return new Response(body, { status: 206, headers: { 'content-range': `bytes ${first}-${first + length - 1}/${total}`, 'content-length': String(length), 'content-type': 'audio/wav' } });
}

describe('boundedMediaRange', () => {
  it('bounds an open range (what Chromium asks) to one chunk, and leaves bounded, suffix and multiple ranges alone', () => {
    expect(boundedMediaRange('bytes=0-', 100)).toBe('bytes=0-99');
    expect(boundedMediaRange('bytes=1000-', 100)).toBe('bytes=1000-1099');
    expect(boundedMediaRange('bytes=1000-1049', 100)).toBe('bytes=1000-1049');
    expect(boundedMediaRange('bytes=-500', 100)).toBe('bytes=-500');
    expect(boundedMediaRange('bytes=0-9,20-29', 100)).toBe('bytes=0-9,20-29');
  });

  it("is asked of every replica, the own origin serving the very URL too (the element's range is kept for it)", () => {
    const page = mediaRequest('http://a.localhost:1/song.wav', 'bytes=4096-');
    const bounded = `bytes=4096-${4096 + 1024 * 1024 - 1}`;
    expect(buildPhysicalRequest(page, 'http://b.localhost:2/song.wav', { selfOrigin: 'http://a.localhost:1', signal }).headers.get('range')).toBe(bounded);
    expect(buildPhysicalRequest(page, 'http://a.localhost:1/song.wav', { selfOrigin: 'http://a.localhost:1', signal }).headers.get('range')).toBe(bounded);
  });
});

describe('heldMediaChunk', () => {
  it('holds a body that ends within the bounds whole, with its status and headers', async () => {
    const held = await heldMediaChunk(partial([new Uint8Array(10).fill(1), new Uint8Array(5).fill(2)], 100, 1000));
    expect(held.status).toBe(206);
    expect(held.headers.get('content-range')).toBe('bytes 100-114/1000');
    expect(new Uint8Array(await held.arrayBuffer())).toEqual(new Uint8Array([...Array<number>(10).fill(1), ...Array<number>(5).fill(2)]));
  });

  it('stops reading at maxBytes and says what it holds in Content-Range and Content-Length', async () => {
    const parts = [new Uint8Array(6).fill(1), new Uint8Array(6).fill(2), new Uint8Array(6).fill(3)];
    const held = await heldMediaChunk(partial(parts, 0, 1000), 8);
    expect(held.headers.get('content-range')).toBe('bytes 0-11/1000'); // the read that passed 8 bytes is kept whole
    expect(held.headers.get('content-length')).toBe('12');
    expect((await held.arrayBuffer()).byteLength).toBe(12);
  });

  it('cuts a 206 at the bytes that arrived within maxMs when the rest is slow (a seek is not held up)', async () => {
    const held = await heldMediaChunk(partial([new Uint8Array(4).fill(1), new Uint8Array(4).fill(2)], 50, 1000, 5_000), undefined, 50);
    expect(held.headers.get('content-range')).toBe('bytes 50-53/1000');
    expect(held.headers.get('content-length')).toBe('4');
    expect(new Uint8Array(await held.arrayBuffer())).toEqual(new Uint8Array(4).fill(1));
  });

  it('streams on an answer it cannot cut (a 200), constructed, losing no byte', async () => {
    const slow = partial([new Uint8Array(4).fill(1), new Uint8Array(4).fill(2)], 0, 8, 200);
    const whole = new Response(slow.body, { status: 200, headers: { 'content-length': '8' } });
    const held = await heldMediaChunk(whole, undefined, 20);
    expect(held).not.toBe(whole);
    expect(held.status).toBe(200);
    expect(new Uint8Array(await held.arrayBuffer())).toEqual(new Uint8Array([1, 1, 1, 1, 2, 2, 2, 2]));
  });

  it('is used for media ranges only, and answers them with a constructed response (never the network\'s own)', async () => {
    const native = partial([new Uint8Array(3)], 0, 3);
    const plain = new Request('http://a.localhost:1/x.wav', { headers: { range: 'bytes=0-' } });
    expect(mediaServedResponse(plain, native)).toBe(native);
    const held = await mediaServedResponse(mediaRequest('http://a.localhost:1/x.wav', 'bytes=0-'), native);
    expect(held).not.toBe(native);
    expect((await held.arrayBuffer()).byteLength).toBe(3);
  });
});
