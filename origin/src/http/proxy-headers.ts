/**
 * Proxy mode's header rules, as a reverse proxy in front of an application server applies
 * them (nginx's `proxy_redirect default` and its usual `X-Forwarded-*` lines):
 * - a redirect the upstream addresses to itself (`Location: http://127.0.0.1:3000/new`,
 *   built from the Host header it was sent) points at this server's public URL instead:
 *   otherwise the browser leaves the replica for an address it may not reach, and the
 *   upstream's address, which only the log should see, reaches every visitor;
 * - the upstream learns the host, scheme and client address the browser used
 *   (`X-Forwarded-Host`, `X-Forwarded-Proto`, `X-Forwarded-For`), so an application that
 *   builds absolute URLs from them writes public ones.
 */
import type { IncomingHttpHeaders } from 'node:http';

/** A `Location` to the upstream's own origin moved to `publicUrl`; any other value unchanged. */
export function rewriteUpstreamLocation(location: string, upstream: string, publicUrl: string): string {
  let target: URL;
  try {
    target = new URL(location);
  } catch {
    return location; // relative: already on this server
  }
  if (target.origin !== new URL(upstream).origin) return location;
  return `${new URL(publicUrl).origin}${target.pathname}${target.search}${target.hash}`;
}

/** The headers sent upstream, with the browser's host, scheme and address added. */
export function forwardedHeaders(
  headers: IncomingHttpHeaders,
  request: { headers: IncomingHttpHeaders; ip: string; host?: string },
  publicUrl: string,
): IncomingHttpHeaders {
  const forwardedFor = headers['x-forwarded-for'];
  const host = request.host ?? request.headers.host;
  return {
    ...headers,
    ...(host === undefined ? {} : { 'x-forwarded-host': host }),
    'x-forwarded-proto': new URL(publicUrl).protocol.slice(0, -1),
    'x-forwarded-for': forwardedFor === undefined ? request.ip : `${String(forwardedFor)}, ${request.ip}`,
  };
}
