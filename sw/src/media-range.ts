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
 * the bytes that arrived within `MEDIA_CHUNK_MAX_MS` of the first ones. Chromium's media
 * loader accepts a 206 shorter than it asked for and asks for the rest itself, only while it still wants data
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
const MEDIA_CHUNK_MAX_BYTES = 1024 * 1024;
/** A chunk is cut at the bytes that arrived within this time of its first bytes (a slow link's seek). */
const MEDIA_CHUNK_MAX_MS = 250;

const CONTENT_RANGE = /^bytes (\d+)-\d+\/(\d+|\*)$/;

/**
 * The Range a replica is asked for a media range: the element's own, bounded to one chunk
 * (`bytes=N-`, what Chromium's media loader asks, → `bytes=N-(N+max-1)`); any other goes as it is.
 */
export function boundedMediaRange(range: string, maxBytes: number = MEDIA_CHUNK_MAX_BYTES): string {
  const start = /^bytes=(\d+)-$/.exec(range)?.[1];
  return start === undefined ? range : `bytes=${start}-${Number(start) + maxBytes - 1}`;
}

/**
 * An answer to a media range, held whole so that the element preloads it as it does the
 * network's own body, and constructed whichever replica served it: every byte up to
 * maxBytes, or those that arrived within maxMs of the first ones, as a Blob, in a 206 whose
 * Content-Range says what it holds. An answer that cannot be cut (not a 206 with a
 * Content-Range: a 200 to a range request) is streamed on, constructed too.
 */
export async function heldMediaChunk(response: Response, maxBytes = MEDIA_CHUNK_MAX_BYTES, maxMs = MEDIA_CHUNK_MAX_MS): Promise<Response> {
  const range = CONTENT_RANGE.exec(response.headers.get('content-range') ?? '');
  if (!response.body || response.status !== 206 || !range) return new Response(response.body, response);
  const reader = response.body.getReader();
  const cut = (): void => void reader.cancel().catch(() => undefined); // a pending read then ends the loop
  const parts: Uint8Array[] = [];
  let heldBytes = 0;
  let timer: ReturnType<typeof setTimeout> | undefined;
  for (let next = await reader.read(); !next.done; next = await reader.read()) {
    parts.push(next.value);
    heldBytes += next.value.byteLength;
    if (heldBytes >= maxBytes) break;
    timer ??= setTimeout(cut, maxMs);
  }
  clearTimeout(timer);
  cut();
  const held = new Response(new Blob(parts as BlobPart[]), response);
  held.headers.set('content-range', `bytes ${range[1]}-${Number(range[1]) + heldBytes - 1}/${range[2]}`);
  held.headers.set('content-length', String(heldBytes));
  return held;
}

/** The page's answer: a media range's is held as one chunk (above); anything else goes as it is. */
export function mediaServedResponse(request: Request, served: Response): Response | Promise<Response> {
  return isMediaRange(request) ? heldMediaChunk(served) : served;
}
