/**
 * Range requests from <audio> and <video> (issue 25, item 8). Chromium facts shape how the
 * worker answers them:
 *  - Chromium's Request constructor drops `Range` from a no-cors request it copies (the
 *    header is not on its no-CORS-safelisted list), so the page's own request, copied to
 *    add an abort signal, would reach the origin without its range (physical-request.ts);
 *  - a media element reads a body the worker streams through JavaScript at its own pace:
 *    with `preload="metadata"` (the default) it stops after the first 64 KB chunk. A body
 *    held whole (a Blob) is preloaded as the network's own body is;
 *  - Chromium refuses media data whose origin changes between ranges: a constructed
 *    response (new Response(), whatever its body) after the network's own response for the
 *    same element stops playback (PIPELINE_ERROR_READ: FFmpegDemuxer: data source error).
 *    An answer re-wrapped under the logical URL (a replica on another origin) is always a
 *    constructed one, so the own origin's answers must be constructed too, or a seek after
 *    the own origin died could not play from a replica.
 * So every media range is answered with one bounded chunk held whole (`heldMediaChunk`):
 * the replica is asked for at most `MEDIA_CHUNK_MAX_BYTES`, and the element gets a 206 of
 * the bytes that arrived within `MEDIA_CHUNK_MAX_MS`. Chromium's media loader accepts a 206
 * shorter than it asked for and asks for the rest itself, only while it still wants data
 * (ResourceMultiBufferDataProvider::DidFinishLoading: "partial data received", a new
 * `Range: bytes=<end>-` 25 ms later): a seek costs at most one chunk, and a preload=metadata
 * element keeps what it read of the first chunk, as it keeps the first burst from the
 * network. A broken chunk is asked again by the element itself, through the worker, which
 * then fails over: the resumable wrapping (resume.ts) is not needed for these.
 */
export function isMediaRange(request: Request): boolean {
  return (request.destination === 'audio' || request.destination === 'video') && request.headers.has('range');
}

/** The most a media range answered through the worker holds at once (memory, and the first byte's wait). */
export const MEDIA_CHUNK_MAX_BYTES = 1024 * 1024;
/** A chunk is cut at the bytes that arrived within this time from the replica's headers (a slow link's seek). */
export const MEDIA_CHUNK_MAX_MS = 250;

const OPEN_OR_BOUNDED = /^bytes=(\d+)-(\d*)$/;
const CONTENT_RANGE = /^bytes (\d+)-(\d+)\/(\d+|\*)$/;

/**
 * The Range a replica is asked for a media range: the element's own, bounded to one chunk (`bytes=N-` → `bytes=N-(N+max-1)`). Suffix and multiple ranges go as they are.
 */
export function boundedMediaRange(range: string, maxBytes: number = MEDIA_CHUNK_MAX_BYTES): string {
  const match = OPEN_OR_BOUNDED.exec(range.trim());
  if (!match) return range;
  const start = Number(match[1]);
  const last = start + maxBytes - 1;
  if (match[2] !== '' && Number(match[2]) <= last) return range;
  return `bytes=${start}-${last}`;
}

export interface MediaChunkOptions {
  maxBytes?: number;
  maxMs?: number;
}

/**
 * An answer to a media range, held whole so that the element preloads it as it does the
 * network's own body, and constructed whichever replica served it: every byte up to maxBytes, or those that arrived within
 * maxMs (at least one read), as a Blob. A 206 cut short says so in its Content-Range; an
 * answer that cannot be cut (a 200, no Content-Range) and does not end within the bounds
 * goes on as a stream, as before.
 */
export async function heldMediaChunk(response: Response, options: MediaChunkOptions = {}): Promise<Response> {
  const maxBytes = options.maxBytes ?? MEDIA_CHUNK_MAX_BYTES;
  const maxMs = options.maxMs ?? MEDIA_CHUNK_MAX_MS;
  if (!response.body || (response.status !== 200 && response.status !== 206)) return response;
  const reader = response.body.getReader();
  const parts: Uint8Array[] = [];
  let heldBytes = 0;
  let done = false;
  const deadline = Date.now() + maxMs;
  let pending: Promise<ReadableStreamReadResult<Uint8Array>> | undefined;
  while (heldBytes < maxBytes) {
    pending ??= reader.read();
    const remainingMs = deadline - Date.now();
    // Past the deadline, a read still pending is not waited for once some bytes are held.
    const next = heldBytes > 0 ? await raceTimeout(pending, Math.max(0, remainingMs)) : await pending;
    if (next === 'timeout') break;
    pending = undefined;
    if (next.done) {
      done = true;
      break;
    }
    parts.push(next.value);
    heldBytes += next.value.byteLength;
    if (Date.now() >= deadline) break;
  }
  const headers = new Headers(response.headers);
  if (done) return new Response(new Blob(parts as BlobPart[]), { status: response.status, statusText: response.statusText, headers });
  const range = CONTENT_RANGE.exec(response.headers.get('content-range') ?? '');
  if (response.status !== 206 || !range) return new Response(restOf(reader, parts, pending), { status: response.status, statusText: response.statusText, headers });
  void reader.cancel().catch(() => undefined);
  const first = Number(range[1]);
  const bytes = new Blob(parts as BlobPart[]).slice(0, Math.min(heldBytes, Number(range[2]) - first + 1));
  headers.set('content-range', `bytes ${first}-${first + bytes.size - 1}/${range[3]}`);
  headers.set('content-length', String(bytes.size));
  return new Response(bytes, { status: 206, statusText: response.statusText, headers });
}

function raceTimeout<T>(promise: Promise<T>, ms: number): Promise<T | 'timeout'> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<'timeout'>((resolve) => (timer = setTimeout(() => resolve('timeout'), ms)));
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/** The bytes held, then the rest of the reader (a pending read first). */
function restOf(reader: ReadableStreamDefaultReader<Uint8Array>, held: Uint8Array[], pending: Promise<ReadableStreamReadResult<Uint8Array>> | undefined): ReadableStream<Uint8Array> {
  return new ReadableStream<Uint8Array>({
    start(controller) {
      for (const part of held) controller.enqueue(part);
    },
    async pull(controller) {
      const next = await (pending ?? reader.read());
      pending = undefined;
      if (next.done) controller.close();
      else controller.enqueue(next.value);
    },
    cancel(reason) {
      return reader.cancel(reason);
    },
  });
}

/** The page's answer: a media range's is held as one chunk (above); anything else goes as it is. */
export function mediaServedResponse(request: Request, served: Response): Response | Promise<Response> {
  return isMediaRange(request) ? heldMediaChunk(served) : served;
}
