/** Header hygiene for a forwarding proxy (RFC 9110 §7.6.1: hop-by-hop fields stay on their hop). */
import type { IncomingHttpHeaders, OutgoingHttpHeaders } from 'node:http';

const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'proxy-authenticate',
  'proxy-authorization',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
]);

/** Names listed in a Connection header are hop-by-hop too. */
function connectionTokens(connection: string | string[] | undefined): Set<string> {
  const value = Array.isArray(connection) ? connection.join(',') : (connection ?? '');
  return new Set(value.split(',').map((token) => token.trim().toLowerCase()).filter(Boolean));
}

/** The request headers to send upstream. */
export function forwardRequestHeaders(headers: IncomingHttpHeaders, upstreamHost: string, preserveHost: boolean): OutgoingHttpHeaders {
  const extra = connectionTokens(headers.connection);
  const result: OutgoingHttpHeaders = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined || HOP_BY_HOP.has(name) || extra.has(name)) continue;
    result[name] = value;
  }
  if (!preserveHost || !result.host) result.host = upstreamHost;
  return result;
}

/** The response headers to send to the client, as a flat raw list (keeps case and repeats). */
export function forwardResponseHeaders(rawHeaders: readonly string[]): string[] {
  const names: string[] = [];
  for (let i = 0; i + 1 < rawHeaders.length; i += 2) {
    if (rawHeaders[i]!.toLowerCase() === 'connection') names.push(rawHeaders[i + 1]!);
  }
  const extra = connectionTokens(names);
  const result: string[] = [];
  for (let i = 0; i + 1 < rawHeaders.length; i += 2) {
    const name = rawHeaders[i]!;
    const lower = name.toLowerCase();
    if (HOP_BY_HOP.has(lower) || extra.has(lower)) continue;
    result.push(name, rawHeaders[i + 1]!);
  }
  return result;
}
