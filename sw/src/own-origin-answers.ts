/**
 * Answers that only the site's own origin can give the page, as the browser would have got
 * them without the worker. The page's own request then goes to the own origin, and the
 * logical URL is remembered (a bounded set), so later requests for it are not bound at all
 * (route.ts: the browser fetches them itself, or the worker observes them).
 *
 * - **Personal answers.** A replica on another origin is asked without the visitor's cookies
 *   (physical-request.ts: they must never leave the site's origin), so what it answers for a
 *   signed-in page is the signed-out page: a visitor who follows a link to /account, under a
 *   directory entry such as `/*`, would find themselves logged out. The response says when
 *   it is personal: `Cache-Control: private` (RFC 9111 §5.2.2.7: "intended for a single
 *   user"; Cache-Control is readable across origins without CORS exposure) or `Vary: Cookie`
 *   / `Vary: Authorization` (when the replica exposes Vary). Such an answer from another
 *   origin to a request that carries the visitor's credentials is dropped. When the own
 *   origin does not answer, the replica's answer is served: the page still loads.
 * - **Redirects.** A replica is asked with `redirect: 'manual'` where the page's request
 *   follows redirects (physical-request.ts), so its redirect comes back opaque: an answer
 *   (the replica is alive, and not marked failed), whose target the worker cannot read.
 *   Followed by the worker in CORS mode, a redirect to a host that sends no CORS headers (a
 *   CDN, a sign-in host) failed, and the replica was marked failed. The page's own request to
 *   the own origin gets the same redirect, which the browser follows as it would without the
 *   worker (an image from a CDN without CORS loads; a navigation lands on the sign-in host).
 *   When the own origin does not answer, the replica's redirect is followed (navigations'
 *   targets mapped back into the logical namespace, served-response.ts).
 */
import { BoundedMap } from './_private/bounded-map.js';
import { stripHash } from './_private/strip-hash.js';
import { buildPhysicalRequest, isSameOrigin } from './physical-request.js';
import type { WorkerPlugin } from './plugins.js';
import { servedResponse } from './served-response.js';
import type { StateReporter } from './state-reporter.js';

const PERSONAL_VARY = /(?:^|,)\s*(?:cookie|authorization)\s*(?=,|$)/i;

/** True when the answer says it is meant for one user. */
export function isPersonalAnswer(response: Response): boolean {
  const cacheControl = response.headers.get('cache-control') ?? '';
  if (/(?:^|,)\s*private\b/i.test(cacheControl)) return true;
  return PERSONAL_VARY.test(response.headers.get('vary') ?? '');
}

/** True when the browser would send the visitor's cookies with this request to the own origin. */
export function carriesCredentials(request: Request, selfOrigin: string): boolean {
  return request.credentials === 'include' || (request.credentials === 'same-origin' && isSameOrigin(request.url, selfOrigin));
}

/** Logical URLs only the own origin answers (personal or redirecting): a bounded set, the least recently noted first out. */
export class OwnOriginUrls {
  private readonly urls: BoundedMap<string, true>;

  constructor(maxEntries = 512) {
    this.urls = new BoundedMap(maxEntries);
  }

  has(logicalUrl: string): boolean {
    return this.urls.has(logicalUrl);
  }

  note(logicalUrl: string): void {
    this.urls.set(logicalUrl, true);
  }
}

/**
 * replicaAnswerWillBeUsed: a replica answered a redirect, or (on another origin) an answer
 * meant for one user to a request that carries the visitor's cookies. The page's own
 * request goes to the own origin instead, and the URL is not bound again (route.ts). When
 * the own origin does not answer, the replica's personal answer stands, and its redirect is
 * followed.
 */
export function ownOriginAnswersPlugin(options: { selfOrigin: string; urls: OwnOriginUrls; reporter: StateReporter }): WorkerPlugin {
  const { selfOrigin, urls, reporter } = options;
  return {
    async replicaAnswerWillBeUsed(bound, result) {
      const { request, io } = bound;
      const { winner, response } = result;
      // A redirect the worker asked for as an answer (redirect: 'manual'), not the page: the page's
      // request follows redirects (a navigation's, the browser follows), and it was not the
      // page's own request (the own origin's very URL, physical-request.ts).
      const redirect = response.type === 'opaqueredirect' && (request.mode === 'navigate' || request.redirect === 'follow') && stripHash(winner.target) !== stripHash(request.url);
      if (!redirect && (isSameOrigin(winner.target, selfOrigin) || !carriesCredentials(request, selfOrigin) || !isPersonalAnswer(response))) return undefined;
      const own = await io.fetch(request).catch(() => undefined);
      if (own && own.type !== 'error' && own.status < 500) {
        // Remembered only when the own origin answers: while it is down, the replicas still serve.
        urls.note(bound.logicalUrl);
        response.body?.cancel().catch(() => undefined);
        reporter.count(redirect ? 'redirectsFromOwnOrigin' : 'personalFromOwnOrigin');
        return own;
      }
      if (!redirect) return undefined; // the own origin is down: the replica's page still loads
      const followed = buildPhysicalRequest(request, winner.target, { selfOrigin, signal: request.signal, follow: true });
      return io.fetch(followed).then((answer) => servedResponse(request, winner.target, answer), () => own ?? Response.error());
    },
  };
}
