/**
 * Turns a replica's response into the response for the page's logical request. The page
 * must get a response it can use under the logical URL:
 *  - never an opaque response for a navigation, and never the replica's URL: the body is
 *    re-wrapped in a new Response with the replica's status, status text and headers, so
 *    the document's URL (and the base of its relative links) stays logical;
 *  - a redirect that the replica answered with is mapped back into the logical namespace
 *    and handed to the browser as a redirect, so a navigation's URL bar and relative links
 *    follow it (e.g. /docs → /docs/); a redirect that leaves the replica's namespace is
 *    passed on as it is.
 * The content type and every header the replica exposes travel along (replicas should send
 * `Access-Control-Expose-Headers: *`, as @webpp/origin does).
 */
import { stripHash } from './_private/strip-hash.js';

/** Statuses that must not carry a body. */
const NULL_BODY_STATUS = new Set([101, 103, 204, 205, 304]);

export function rewrap(response: Response, method: string): Response {
  const body = NULL_BODY_STATUS.has(response.status) || method === 'HEAD' ? null : response.body;
  if (body === null && response.body) response.body.cancel().catch(() => undefined);
  return new Response(body, { status: response.status, statusText: response.statusText, headers: response.headers });
}

/**
 * The logical URL that corresponds to a physical URL the replica redirected to. Replicas
 * mirror the logical layout below a mount point: the part of the paths that the requested
 * physical and logical URLs share at their end is the same resource, so whatever differs at
 * the start is the mount. A target outside the mount, or on another origin, has no logical
 * counterpart: undefined.
 */
export function logicalUrlOfRedirect(logicalUrl: string, requestedPhysicalUrl: string, finalUrl: string): string | undefined {
  const logical = new URL(logicalUrl);
  const physical = new URL(requestedPhysicalUrl);
  const target = new URL(finalUrl);
  if (target.origin !== physical.origin) return undefined;
  const logicalPath = logical.pathname;
  const physicalPath = physical.pathname;
  let common = 0;
  while (
    common < logicalPath.length &&
    common < physicalPath.length &&
    logicalPath[logicalPath.length - 1 - common] === physicalPath[physicalPath.length - 1 - common]
  ) {
    common++;
  }
  // Cut the mounts at a "/" so that "/a/x" vs "/b/x" mounts are "/a" and "/b".
  let physicalMount = physicalPath.slice(0, physicalPath.length - common);
  let logicalMount = logicalPath.slice(0, logicalPath.length - common);
  const slash = physicalPath.slice(physicalMount.length).indexOf('/');
  if (slash > 0) {
    physicalMount = physicalPath.slice(0, physicalMount.length + slash);
    logicalMount = logicalPath.slice(0, logicalMount.length + slash);
  }
  if (!target.pathname.startsWith(physicalMount)) return undefined;
  return `${logical.origin}${logicalMount}${target.pathname.slice(physicalMount.length)}${target.search}${target.hash}`;
}

/**
 * The response for the page. `requestedPhysicalUrl` is what the worker asked the replica
 * for; `response.url` is where the answer finally came from.
 */
export function servedResponse(logical: Request, requestedPhysicalUrl: string, response: Response): Response {
  // An opaque redirect: the page asked for redirect: 'manual' (navigations do). Opaque: the page's
  // own no-cors request, redirected by its origin to another host (physical-request.ts).
  if (response.type.startsWith('opaque')) return response;
  if (response.redirected && logical.mode === 'navigate') {
    const target = logicalUrlOfRedirect(logical.url, requestedPhysicalUrl, response.url) ?? response.url;
    if (stripHash(target) !== stripHash(logical.url)) {
      response.body?.cancel().catch(() => undefined);
      // 302 keeps the method semantics the browser expects for a followed redirect (GET stays GET).
      return Response.redirect(target, 302);
    }
  }
  // Unchanged when it already is the page's own same-origin response for the logical URL.
  if (response.type === 'basic' && !response.redirected && stripHash(requestedPhysicalUrl) === stripHash(logical.url)) {
    return response;
  }
  return rewrap(response, logical.method);
}
