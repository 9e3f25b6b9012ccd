/**
 * Answers meant for one visitor come from the site's own origin. A replica on another origin
 * is asked without the visitor's cookies (physical-request.ts: they must never leave the
 * site's origin), so what it answers for a signed-in page is the signed-out page: a visitor
 * who follows a link to /account, under a directory entry such as `/*`, would find themselves
 * logged out. The response says when it is personal: `Cache-Control: private` (RFC 9111
 * §5.2.2.7: "intended for a single user"; Cache-Control is readable across origins without
 * CORS exposure) or `Vary: Cookie` / `Vary: Authorization` (when the replica exposes Vary).
 * Such an answer from another origin to a request that carries the visitor's credentials is
 * dropped and the page's own request goes to the own origin; the logical URL is remembered,
 * so later requests for it are not bound at all (route.ts). When the own origin does not
 * answer, the replica's answer is served: the page still loads.
 */
import { BoundedMap } from './_private/bounded-map.js';
import { isSameOrigin } from './physical-request.js';
import type { WorkerPlugin } from './plugins.js';
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

/** Logical URLs whose answers were personal: a bounded set, the least recently noted first out. */
export class PersonalUrls {
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
 * replicaAnswerWillBeUsed: a replica on another origin answered a request that carries the
 * visitor's cookies with an answer meant for one user. It got no cookies, so that answer is
 * not this visitor's: the page's own request goes to the own origin instead, and the URL is
 * never bound again (route.ts). When the own origin is down, the replica's answer stands.
 */
export function personalAnswersPlugin(options: { selfOrigin: string; personal: PersonalUrls; reporter: StateReporter }): WorkerPlugin {
  const { selfOrigin, personal, reporter } = options;
  return {
    async replicaAnswerWillBeUsed(bound, result) {
      const { request } = bound;
      if (isSameOrigin(result.winner.target, selfOrigin) || !carriesCredentials(request, selfOrigin) || !isPersonalAnswer(result.response)) return undefined;
      personal.note(bound.logicalUrl);
      const own = await bound.io.fetch(request).catch(() => undefined);
      if (!own || own.type === 'error' || own.status >= 500) return undefined; // the own origin is down: the replica's page still loads
      result.response.body?.cancel().catch(() => undefined);
      reporter.count('personalFromOwnOrigin');
      return own;
    },
  };
}
