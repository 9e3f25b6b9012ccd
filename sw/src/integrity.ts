/**
 * Checks a replica's body against the SHA-256 digest the site's own origin gave for its
 * logical URL (docs/service-worker.md, "Integrity"):
 *  - a body of at most `maxBufferBytes` is read whole, hashed with crypto.subtle and only
 *    then handed on: a mismatch is found before the page sees a byte, and the request can
 *    fail over to the next replica;
 *  - a larger body streams to the page while an incremental SHA-256 (@webpp/core's createSha256) runs
 *    over it; the last chunk is held back until the digest is known, so on a mismatch the
 *    page never gets the whole body: its read fails with a network error instead.
 * Only whole 200 bodies can be checked: 206, 304, HEAD, opaque and redirected responses are
 * skipped.
 */
import { createSha256 } from '@webpp/core';

/** Bodies up to this size are verified before the page sees them. */
export const DEFAULT_VERIFY_BUFFER_BYTES = 1024 * 1024;

export type BodyCheck =
  /** Cannot be checked against a whole-body digest (see the module comment). */
  | { kind: 'skipped' }
  /** Read whole and matched: `response` carries the same bytes. */
  | { kind: 'verified'; response: Response }
  /** Read whole and did not match. */
  | { kind: 'mismatch'; actual: string }
  /** The body broke off while it was read. */
  | { kind: 'unreadable'; error: string }
  /** Too large to hold: `response` has the same bytes, unchecked; check them with verifyingResponse(). */
  | { kind: 'too-large'; response: Response };

/** True when the request asks for the whole body, so that a whole-body digest applies to its answer. */
export function wantsWholeBody(request: Request): boolean {
  return request.method === 'GET' && !request.headers.has('range');
}

/**
 * How a replica's answer to a whole-body request for a URL with a digest is judged:
 * 'check' a 200 (redirected or not: the body is still the logical URL's content), 'pass'
 * a 304 (no body; the copy it revalidates was checked when it came), and 'refuse' anything
 * else (203, 206, an opaque redirect, …): such an answer cannot be checked, so it is a
 * failed attempt, never a way around the check.
 */
export function replicaAnswerVerdict(response: Response): 'check' | 'pass' | 'refuse' {
  if (response.status === 304) return 'pass';
  if (response.type === 'opaque' || response.type === 'opaqueredirect') return 'refuse';
  return response.status === 200 && response.body !== null ? 'check' : 'refuse';
}

/** "sha256-" + base64 of the digest, as in Subresource Integrity. */
function integrityOf(digest: Uint8Array): string {
  let binary = '';
  for (const byte of digest) binary += String.fromCharCode(byte);
  return `sha256-${btoa(binary)}`;
}

export async function sha256Integrity(bytes: Uint8Array): Promise<string> {
  return integrityOf(new Uint8Array(await crypto.subtle.digest('SHA-256', bytes as Uint8Array<ArrayBuffer>)));
}

/** Checks `response` (replicaAnswerVerdict() is 'check') against `integrity`, if it is at most maxBufferBytes. */
export async function checkBody(response: Response, integrity: string, maxBufferBytes: number): Promise<BodyCheck> {
  const declaredBytes = Number(response.headers.get('content-length') ?? Number.NaN);
  if (declaredBytes > maxBufferBytes) return { kind: 'too-large', response };
  const reader = (response.body as ReadableStream<Uint8Array>).getReader();
  const chunks: Uint8Array[] = [];
  let bufferedBytes = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      chunks.push(value);
      bufferedBytes += value.byteLength;
      if (bufferedBytes > maxBufferBytes) break;
    }
  } catch (error) {
    return { kind: 'unreadable', error: String(error) };
  }
  if (bufferedBytes <= maxBufferBytes) {
    const body = concat(chunks, bufferedBytes);
    const actual = await sha256Integrity(body);
    if (actual !== integrity) return { kind: 'mismatch', actual };
    return { kind: 'verified', response: withBody(response, body as Uint8Array<ArrayBuffer>) };
  }
  return { kind: 'too-large', response: withBody(response, replay(chunks, reader)) };
}

/**
 * `response` with a body that is hashed as it streams: the last chunk waits for the verdict,
 * and on a mismatch `onMismatch` is called and the body errors instead of ending.
 */
export function verifyingResponse(
  response: Response,
  integrity: string,
  onMismatch: (actual: string) => void,
  onMatch?: () => void,
): Response {
  if (!response.body) return response;
  const reader = response.body.getReader();
  const hash = createSha256();
  let held: Uint8Array | undefined;
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) {
          const actual = integrityOf(hash.digest());
          if (actual !== integrity) {
            onMismatch(actual);
            controller.error(new TypeError('webpp: body does not match its SHA-256 digest'));
            return;
          }
          onMatch?.();
          if (held) controller.enqueue(held);
          controller.close();
          return;
        }
        hash.update(value);
        const ready = held;
        held = value;
        if (ready) {
          controller.enqueue(ready);
          return;
        }
      }
    },
    cancel(reason) {
      return reader.cancel(reason);
    },
  });
  return withBody(response, body);
}

/** The chunks already read, then the rest of `reader`. */
function replay(first: Uint8Array[], reader: ReadableStreamDefaultReader<Uint8Array>): ReadableStream<Uint8Array> {
  const queue = [...first];
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      const chunk = queue.shift();
      if (chunk !== undefined) {
        controller.enqueue(chunk);
        return;
      }
      const { done, value } = await reader.read();
      if (done) controller.close();
      else controller.enqueue(value);
    },
    cancel(reason) {
      return reader.cancel(reason);
    },
  });
}

function withBody(response: Response, body: BodyInit): Response {
  return new Response(body, { status: response.status, statusText: response.statusText, headers: response.headers });
}

function concat(chunks: Uint8Array[], totalBytes: number): Uint8Array {
  if (chunks.length === 1) return chunks[0] as Uint8Array;
  const body = new Uint8Array(totalBytes);
  let offset = 0;
  for (const chunk of chunks) {
    body.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return body;
}
