/**
 * A response body that survives its replica dying mid-stream. The paper's client retries a
 * request on the next replica when the first gives no answer (Section 4.1, Figure 4); a
 * replica can also die after its headers, while the body streams (a large image, a video).
 * Without help the page would see a broken body. This stream passes the replica's body on
 * chunk by chunk and, when it breaks off, asks the next replica for the rest only:
 *
 *   Range: bytes=<next byte>-           (the rest of a 206: bytes=<next byte>-<its last byte>)
 *   If-Range: <the first answer's strong ETag>        (when it had one)
 *
 *  - a 206 whose Content-Range starts at that byte continues the body;
 *  - a 200 (a replica that ignores Range, or whose entity no longer matches If-Range) is the
 *    whole entity: the bytes the page already has are skipped, and the rest continues;
 *  - a different entity (ETag, Last-Modified or total length differ; Last-Modified only when
 *    no strong ETag came back unchanged, since replicas may date the same bytes differently),
 *    or any other answer, errors the stream: the page must never get two files spliced together.
 *
 * Content-encoding: fetch() hands over decoded bytes, and a Range request is sent with
 * `Accept-Encoding: identity` (Fetch standard), so byte positions are positions in the
 * identity representation. An encoded first answer's ETag names the encoded variant, so it
 * is not sent as If-Range, and only Last-Modified is compared then.
 */
import type { ServerId } from '@webpp/core';
import { headerInteger } from './_private/numbers.js';

/** What the first answer says about the entity and where its body lies in it. */
export interface BodyExtent {
  /** Position (in the whole representation) of the body's first byte. */
  startByte: number;
  /** Position of its last byte, when known. */
  endByte: number | undefined;
  /** Length of the whole representation, when known. */
  totalBytes: number | undefined;
  strongEtag: string | undefined;
  etag: string | undefined;
  lastModified: string | undefined;
  /** Content-encoded (gzip, br…): the ETag names the encoded variant. */
  encoded: boolean;
}

/** What the stream asks for when the body breaks off. */
export interface ResumeRequest {
  /** `Range` header value: `bytes=<fromByte>-[<toByte>]`. */
  range: string;
  fromByte: number;
  toByte: number | undefined;
  /** `If-Range` header value, when the first answer had a strong ETag. */
  ifRange: string | undefined;
  /** Servers not to ask: those whose body already broke (and those that could not continue it). */
  exclude: ReadonlySet<ServerId>;
}

interface ResumeAnswer {
  server: ServerId;
  response: Response;
}

export interface ResumeReport {
  from: ServerId;
  /** Position of the first byte the page had not received. */
  atByte: number;
  to?: ServerId;
  ok: boolean;
  reason?: string;
}

export interface ResumableBodyOptions {
  /** The replica's answer (status 200 or 206). */
  response: Response;
  server: ServerId;
  /** Asks the next replica (not in `exclude`) for the rest; undefined when none answers. */
  fetchRest(request: ResumeRequest): Promise<ResumeAnswer | undefined>;
  /** The body from `server` broke off (mark it failed). */
  onBroken?(server: ServerId, atByte: number, error: unknown): void;
  /** Whether the rest came from another replica. */
  onResumed?(report: ResumeReport): void;
  /** Called once when the stream ends, however it ends (for event.waitUntil). */
  onSettled?(): void;
  /** The page cancelled the body (its request's exchanges will not end on their own). */
  onCancelled?(): void;
  /** At most this many resumes per body. Default 3. */
  maxResumes?: number;
  /**
   * A body that delivers no byte for this long is treated as broken and resumed, as when
   * its replica is partitioned mid-stream and the connection freezes without an error.
   * Undefined: no watchdog.
   */
  idleTimeoutMs?: number;
}

/** The body went silent: no byte for `idleTimeoutMs`. */
class BodyStalledError extends Error {
  constructor(readonly idleTimeoutMs: number) {
    super(`no body bytes for ${idleTimeoutMs} ms`);
    this.name = 'BodyStalledError';
  }
}

/** The next chunk, or a BodyStalledError when none arrives within `idleTimeoutMs`. */
function readWithin(
  reader: ReadableStreamDefaultReader<Uint8Array>,
  idleTimeoutMs: number | undefined,
): Promise<ReadableStreamReadResult<Uint8Array>> {
  if (idleTimeoutMs === undefined) return reader.read();
  let timer: ReturnType<typeof setTimeout> | undefined;
  const stalled = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new BodyStalledError(idleTimeoutMs)), idleTimeoutMs);
  });
  return Promise.race([reader.read(), stalled]).finally(() => clearTimeout(timer));
}

const CONTENT_RANGE = /^bytes (\d+)-(\d+)\/(\d+|\*)$/;


/** Where the body of a 200 or single-range 206 answer lies; undefined when it cannot be resumed. */
export function bodyExtent(response: Response): BodyExtent | undefined {
  const { headers } = response;
  const encoding = headers.get('content-encoding')?.trim().toLowerCase();
  const encoded = encoding !== undefined && encoding !== '' && encoding !== 'identity';
  const etag = headers.get('etag')?.trim() || undefined;
  const common = {
    etag,
    strongEtag: etag !== undefined && !etag.startsWith('W/') ? etag : undefined,
    lastModified: headers.get('last-modified')?.trim() || undefined,
    encoded,
  };
  // A live stream (server-sent events): silences are part of it, and there is no rest to ask another replica for.
  if (headers.get('content-type')?.trim().toLowerCase().startsWith('text/event-stream') === true) return undefined;
  if (response.status === 200) {
    const totalBytes = encoded ? undefined : headerInteger(headers.get('content-length'));
    // Nothing names the entity (no ETag, no Last-Modified, no length): another replica's answer
    // could not be checked against it, so a resume could splice two entities. Such bodies are
    // mostly generated streams (server-sent events, long polls), whose silences are normal.
    if (common.etag === undefined && common.lastModified === undefined && totalBytes === undefined) return undefined;
    return { startByte: 0, endByte: totalBytes === undefined ? undefined : totalBytes - 1, totalBytes, ...common };
  }
  if (response.status === 206) {
    const range = CONTENT_RANGE.exec(headers.get('content-range')?.trim() ?? '');
    if (!range) return undefined; // multipart/byteranges: not resumable
    const startByte = Number(range[1]);
    const endByte = Number(range[2]);
    if (endByte < startByte) return undefined;
    return { startByte, endByte, totalBytes: range[3] === '*' ? undefined : Number(range[3]), ...common };
  }
  return undefined;
}

/** How to continue from a resume answer: bytes to drop first, or why it cannot continue the body. */
export function continuation(response: Response, first: BodyExtent, fromByte: number): { skipBytes: number } | { error: string } {
  const next = bodyExtent(response);
  if (!next) return { error: `answer ${response.status} cannot continue the body` };
  // A strong ETag must come back unchanged; a weak one must at least not differ.
  if (!first.encoded && first.etag !== undefined) {
    const changed = first.strongEtag !== undefined ? next.etag !== first.strongEtag : next.etag !== undefined && next.etag !== first.etag;
    if (changed) return { error: `entity changed (ETag ${first.etag} → ${next.etag ?? 'none'})` };
  }
  // A strong ETag that came back unchanged identifies the representation (RFC 9110 §8.8.3.2);
  // Last-Modified is then not compared: replicas that hold the same bytes may date them differently.
  const sameStrongEtag = !first.encoded && first.strongEtag !== undefined && next.etag === first.strongEtag;
  if (!sameStrongEtag && first.lastModified !== undefined && next.lastModified !== undefined && first.lastModified !== next.lastModified) {
    return { error: `entity changed (Last-Modified ${first.lastModified} → ${next.lastModified})` };
  }
  if (first.totalBytes !== undefined && next.totalBytes !== undefined && first.totalBytes !== next.totalBytes) {
    return { error: `entity changed (${first.totalBytes} → ${next.totalBytes} bytes)` };
  }
  if (response.status === 206) {
    // A range asked for earlier (a second fetch started mid-body, raced-body.ts) may start
    // before the byte the page has now: those bytes are skipped. One that starts after it
    // would leave a hole.
    if (next.startByte > fromByte) return { error: `Content-Range starts at ${next.startByte}, after ${fromByte}` };
    if (first.endByte !== undefined && next.endByte !== undefined && next.endByte < first.endByte) {
      return { error: `Content-Range ends at ${next.endByte}, before ${first.endByte}` };
    }
    return { skipBytes: fromByte - next.startByte };
  }
  return { skipBytes: fromByte }; // a 200: the whole entity from byte 0
}

/**
 * `chunk` without the bytes still to skip (a continuation's bytes the page already has), and
 * how many remain to skip after it: an empty chunk when all of it is skipped.
 */
export function afterSkipped(chunk: Uint8Array, skipBytes: number): { chunk: Uint8Array; skipBytes: number } {
  if (skipBytes <= 0) return { chunk, skipBytes: 0 };
  if (chunk.byteLength <= skipBytes) return { chunk: chunk.subarray(chunk.byteLength), skipBytes: skipBytes - chunk.byteLength };
  return { chunk: chunk.subarray(skipBytes), skipBytes: 0 };
}

/**
 * The body for the page: the replica's body, resumed from another replica when it breaks
 * off. Returns the original body when the answer cannot be resumed (not 200/206, multipart).
 */
export function resumableBody(options: ResumableBodyOptions): ReadableStream<Uint8Array> | null {
  const { response } = options;
  const body = response.body;
  const first = body ? bodyExtent(response) : undefined;
  if (!body || !first) return body;

  const maxResumes = options.maxResumes ?? 3;
  /** Bytes this body must have in all, when known. */
  const expectedBytes = first.endByte === undefined ? undefined : first.endByte - first.startByte + 1;
  const excluded = new Set<ServerId>([options.server]);
  let reader: ReadableStreamDefaultReader<Uint8Array> = body.getReader();
  let current = options.server;
  let delivered = 0;
  let skipBytes = 0;
  let resumes = 0;
  let cancelled = false;
  let settled = false;
  const settle = (): void => {
    if (settled) return;
    settled = true;
    options.onSettled?.();
  };

  /** After a break: the reader of the rest, or undefined (the stream then errors). */
  const resume = async (error: unknown): Promise<boolean> => {
    const atByte = first.startByte + delivered;
    const from = current;
    options.onBroken?.(from, atByte, error);
    const fail = (reason: string): false => {
      options.onResumed?.({ from, atByte, ok: false, reason });
      return false;
    };
    if (resumes >= maxResumes) return fail(`gave up after ${resumes} resumes`);
    resumes++;
    const ifRange = first.encoded ? undefined : first.strongEtag;
    // The rest of a whole entity is open-ended; the rest of a range keeps the range's end.
    const toByte = response.status === 206 ? first.endByte : undefined;
    let answer: ResumeAnswer | undefined;
    try {
      answer = await options.fetchRest({
        range: `bytes=${atByte}-${toByte ?? ''}`,
        fromByte: atByte,
        toByte,
        ifRange,
        exclude: new Set(excluded),
      });
    } catch (fetchError) {
      return fail(String(fetchError));
    }
    if (!answer) return fail('no other replica answered');
    excluded.add(answer.server);
    const plan = continuation(answer.response, first, atByte);
    if ('error' in plan || !answer.response.body) {
      answer.response.body?.cancel().catch(() => undefined);
      return fail('error' in plan ? plan.error : 'answer without a body');
    }
    reader = answer.response.body.getReader();
    current = answer.server;
    skipBytes = plan.skipBytes;
    options.onResumed?.({ from, atByte, to: answer.server, ok: true });
    return true;
  };

  return new ReadableStream<Uint8Array>(
    {
      // Every pull ends by enqueueing, closing or erroring: the stream never stalls.
      async pull(controller) {
        for (;;) {
          let chunk: Uint8Array;
          try {
            const result = await readWithin(reader, options.idleTimeoutMs);
            if (result.done) {
              controller.close();
              settle();
              return;
            }
            chunk = result.value;
          } catch (error) {
            if (cancelled) return;
            // A silent replica's read stays pending: drop that reader before moving on.
            if (error instanceof BodyStalledError) reader.cancel(error).catch(() => undefined);
            // Broken after the last byte: the page has everything.
            if (expectedBytes !== undefined && delivered >= expectedBytes) {
              controller.close();
              settle();
              return;
            }
            if (!(await resume(error))) {
              controller.error(error);
              settle();
              return;
            }
            continue;
          }
          ({ chunk, skipBytes } = afterSkipped(chunk, skipBytes));
          if (expectedBytes !== undefined && delivered + chunk.byteLength > expectedBytes) {
            // A 200 answer to a resume goes on past the range the page asked for.
            chunk = chunk.subarray(0, expectedBytes - delivered);
            delivered += chunk.byteLength;
            if (chunk.byteLength > 0) controller.enqueue(chunk);
            controller.close();
            reader.cancel().catch(() => undefined);
            settle();
            return;
          }
          if (chunk.byteLength === 0) continue;
          delivered += chunk.byteLength;
          controller.enqueue(chunk);
          return;
        }
      },
      cancel(reason) {
        cancelled = true;
        settle();
        options.onCancelled?.();
        return reader.cancel(reason);
      },
    },
    { highWaterMark: 0 },
  );
}
