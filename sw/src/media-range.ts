/**
 * Range requests from <audio> and <video> (issue 25, item 8). Two Chromium facts shape how
 * the worker answers them:
 *  - Chromium's Request constructor drops `Range` from a no-cors request it copies (the
 *    header is not on its no-CORS-safelisted list), so the page's own request, copied to
 *    add an abort signal, would reach the origin without its range (physical-request.ts);
 *  - a media element reads a body the worker re-streams through JavaScript at its own pace,
 *    so with `preload="metadata"` (the default) it stops after the first 64 KB chunk, while a
 *    body handed through untouched (the network's own) is preloaded as without a worker.
 *    The element re-requests a broken range itself, through the worker, which then fails
 *    over: the worker's resumable wrapping (resume.ts) is not needed for these.
 */
export function isMediaRange(request: Request): boolean {
  return (request.destination === 'audio' || request.destination === 'video') && request.headers.has('range');
}
