/**
 * Builds the request the worker sends to a replica for a logical request. The rules:
 *  - same method; Range and conditional headers travel along (a partial or 304 answer is
 *    passed back unchanged);
 *  - a replica on the page's own origin gets the request's credentials; a replica on any
 *    other origin is fetched in CORS mode with `credentials: 'omit'`, so the site's cookies
 *    never reach another origin, and without headers the browser added on its own that
 *    would force a CORS preflight on every request;
 *  - when the own origin serves the very URL the page asked for, the page's own request goes
 *    (its mode, credentials and redirect mode), so redirects behave as without the worker;
 *  - otherwise a redirect is the replica's answer: where the page's request follows redirects
 *    (and for navigations, which the browser follows itself) the replica is asked with
 *    `redirect: 'manual'`, and its opaque redirect sends the page's own request to the own
 *    origin (own-origin-answers.ts). Followed in CORS mode, a redirect to a host without CORS
 *    headers (a CDN, a sign-in host) failed, and marked a live replica failed. With `follow`
 *    (the own origin is down), navigations follow the replica's redirect here and the
 *    response is mapped back (served-response.ts), because a Request cannot be built in
 *    'navigate' mode.
 */

import { stripHash } from './_private/strip-hash.js';
import { boundedMediaRange, isMediaRange } from './media-range.js';

/** Headers the browser adds itself; forwarding them cross-origin would only trigger preflights. */
const CROSS_ORIGIN_DROPPED = new Set([
  'cache-control',
  'pragma',
  'upgrade-insecure-requests',
  'service-worker-navigation-preload',
  'user-agent',
]);

/** Accept value for navigations to other origins (the browser's own is too long to be CORS-safelisted). */
const NAVIGATION_ACCEPT = 'text/html,application/xhtml+xml,*/*;q=0.8';

/** CORS-safelisted Accept: at most 128 bytes, no CORS-unsafe bytes (Fetch standard). */
function isSafelistedAccept(value: string): boolean {
  // eslint-disable-next-line no-control-regex -- CORS-unsafe bytes include the control characters
  return value.length <= 128 && !/["():<>?@[\\\]{}\u0000-\u0008\u000a-\u001f\u007f]/.test(value);
}

export interface PhysicalRequestOptions {
  /** The page's origin (the worker's own), e.g. "http://a.localhost:8081". */
  selfOrigin: string;
  signal: AbortSignal;
  /** Override the HTTP method (HEAD for refreshes and probes). */
  method?: 'GET' | 'HEAD';
  /** Override the cache mode (probes bypass the HTTP cache). */
  cache?: RequestCache;
  /**
   * The rest of a body that broke off (resumable-body.ts): this Range (and If-Range) instead
   * of the page's own Range and conditional headers, no integrity (it covers the whole body,
   * which the page checks), and no HTTP cache.
   */
  resume?: { range: string; ifRange: string | undefined };
  /** Follow the replica's redirects (own-origin-answers.ts: the own origin did not answer). */
  follow?: boolean;
}

/** Headers a resume request must not carry over from the page's request. */
const RESUME_REPLACED = new Set(['range', 'if-range', 'if-match', 'if-none-match', 'if-modified-since', 'if-unmodified-since']);

export function isSameOrigin(url: string, origin: string): boolean {
  return url.startsWith(origin) && (url.length === origin.length || url[origin.length] === '/');
}

export function buildPhysicalRequest(logical: Request, physicalUrl: string, options: PhysicalRequestOptions): Request {
  const sameOrigin = isSameOrigin(physicalUrl, options.selfOrigin);
  // The page's own origin holds the very URL the page asked for: send the page's own request
  // (its mode, credentials, redirect mode, integrity), so the answer is what the browser would
  // have got without the worker. A redirect to another host is then followed by a no-cors
  // image, or handed back to a navigation (redirect mode 'manual': an opaque redirect the
  // browser follows itself), instead of failing in 'same-origin' mode and marking the origin failed.
  const ownUrl = sameOrigin && !options.resume && options.method === undefined && options.cache === undefined && stripHash(physicalUrl) === stripHash(logical.url);
  // A media element's no-cors Range would be dropped by a copy (media-range.ts): the range
  // is asked in CORS mode instead, which a same-origin URL needs no CORS for.
  const rangeKept = ownUrl && logical.mode === 'no-cors' && isMediaRange(logical);
  if (ownUrl && !rangeKept) return new Request(logical, { signal: options.signal });
  const navigation = logical.mode === 'navigate';
  const headers = new Headers();
  logical.headers.forEach((value, name) => {
    if (!sameOrigin && CROSS_ORIGIN_DROPPED.has(name)) return;
    if (options.resume && RESUME_REPLACED.has(name)) return;
    if (!sameOrigin && name === 'accept' && !isSafelistedAccept(value)) {
      if (navigation) headers.set('accept', NAVIGATION_ACCEPT);
      return;
    }
    headers.set(name, value);
  });

  // A media range is answered one held chunk at a time: ask for one (media-range.ts).
  const range = headers.get('range');
  if (range !== null && isMediaRange(logical)) headers.set('range', boundedMediaRange(range));

  if (options.resume) {
    headers.set('range', options.resume.range);
    if (options.resume.ifRange !== undefined) headers.set('if-range', options.resume.ifRange);
  }

  let cache: RequestCache = options.resume ? 'no-store' : (options.cache ?? logical.cache);
  // 'only-if-cached' is only allowed in 'same-origin' mode.
  if (cache === 'only-if-cached' && !sameOrigin) cache = 'default';

  const init: RequestInit = {
    method: options.method ?? logical.method,
    headers,
    mode: sameOrigin && !rangeKept ? 'same-origin' : 'cors',
    // With rangeKept, a redirect to another host (a CDN) goes without cookies, as CORS's `*` needs.
    credentials: sameOrigin ? (logical.credentials === 'omit' ? 'omit' : rangeKept ? 'same-origin' : 'include') : 'omit',
    cache,
    // A resume follows: the rest of a body the page already has part of.
    redirect: navigation || logical.redirect === 'follow' ? (options.follow || options.resume ? 'follow' : 'manual') : logical.redirect,
    referrerPolicy: logical.referrerPolicy,
    signal: options.signal,
  };
  // '' (no referrer, e.g. a typed URL) must stay '': leaving it unset would send the worker's URL.
  if (logical.referrer !== 'about:client') init.referrer = logical.referrer;
  // Subresource integrity still holds: a replica with other bytes fails and the next is tried.
  if (logical.integrity && options.method !== 'HEAD' && !options.resume) init.integrity = logical.integrity;
  return new Request(physicalUrl, init);
}

/**
 * A HEAD request for an asynchronous refresh or probe: never from the HTTP cache, no cookies
 * cross-origin. With `rangeBytes`, a GET of the first rangeBytes bytes instead (a policy that
 * measures throughput asks for it). A redirect is the server's answer and is not followed
 * (`redirect: 'manual'`): following it timed the redirect's target as the replica, and a
 * target without CORS headers (a CDN, a sign-in host) failed the fetch and marked a live
 * replica failed. `redirect: 'follow'` where the final answer's headers are wanted.
 */
export function buildProbeRequest(physicalUrl: string, selfOrigin: string, signal: AbortSignal, rangeBytes?: number, redirect: RequestRedirect = 'manual'): Request {
  const sameOrigin = isSameOrigin(physicalUrl, selfOrigin);
  const ranged = rangeBytes !== undefined && Number.isInteger(rangeBytes) && rangeBytes > 0;
  return new Request(physicalUrl, {
    method: ranged ? 'GET' : 'HEAD',
    ...(ranged ? { headers: { range: `bytes=0-${rangeBytes - 1}` } } : {}),
    mode: sameOrigin ? 'same-origin' : 'cors',
    credentials: sameOrigin ? 'same-origin' : 'omit',
    cache: 'no-store',
    redirect,
    signal,
  });
}
