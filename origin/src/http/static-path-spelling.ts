/**
 * Files whose names hold a reserved character (`b@2x.jpg`, `c,comma.jpg`, `a+b.css`), asked
 * for with that character percent-encoded (`/img/b%402x.jpg`), as browsers and plain static
 * servers allow. @fastify/static decodes a path with decodeURI(), which leaves the escapes of
 * `$ & + , : ; = @` encoded, and then looks for a file named `b%402x.jpg`: a 404 (issue 25 §5).
 * Its wildcard handler is wrapped so that it reads the path with those escapes decoded; it
 * reads the URL once, synchronously, and the request keeps its own spelling for every other
 * plugin (cache key, bindings, redirects). Only these eight escapes are decoded: `%2F`, `%5C`,
 * `%25`, `%2E` and NUL stay as they are, and @fastify/static's own checks (dot segments,
 * spelling, root) still apply to the result, so nothing outside the root is reachable.
 */
import type { RouteHandlerMethod, RouteOptions } from 'fastify';

/** $ & + , : ; = @ — reserved, not path-significant, left encoded by decodeURI. */
const RESERVED_ESCAPE = /%(?:2[46BC]|3[ABD]|40)/gi;

/** `url` with the escapes of `$ & + , : ; = @` in its path decoded (its query untouched). */
function decodeReservedEscapes(url: string): string {
  const queryStart = url.indexOf('?');
  const path = queryStart < 0 ? url : url.slice(0, queryStart);
  if (!path.includes('%')) return url;
  const decoded = path.replace(RESERVED_ESCAPE, (escape) => String.fromCharCode(parseInt(escape.slice(1), 16)));
  return queryStart < 0 ? decoded : decoded + url.slice(queryStart);
}

/** onRoute hook for @fastify/static's context: its wildcard handler sees the path as above. */
export function decodeReservedEscapesForStatic(route: RouteOptions): void {
  if (!route.url.endsWith('*')) return;
  const handler = route.handler as (...args: Parameters<RouteHandlerMethod>) => unknown;
  route.handler = function staticWithReservedEscapesDecoded(request, reply) {
    const original = request.raw.url;
    if (original === undefined) return handler.call(this, request, reply);
    request.raw.url = decodeReservedEscapes(original);
    try {
      return handler.call(this, request, reply);
    } finally {
      request.raw.url = original;
    }
  };
}
