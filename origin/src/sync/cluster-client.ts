/**
 * Signed server-to-server HTTP requests (see http/auth.ts for the signature scheme), made
 * with node:http(s). Host names "localhost" and "*.localhost" always reach the loopback
 * interface, as RFC 6761 §6.3 asks and browsers do, even where the system resolver does
 * not know them, so that clusters named a.localhost, b.localhost, … work everywhere.
 */
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { lookup as dnsLookup, type LookupAddress, type LookupOptions } from 'node:dns';
import { CLUSTER_AUTH_HEADER, signClusterRequest } from '../http/auth.js';

export interface ClusterRequest {
  method: 'POST' | 'PUT' | 'DELETE' | 'GET';
  body?: Uint8Array;
  headers?: Record<string, string>;
  timeoutMs: number;
  /** Largest response body accepted. Default 64 MiB. */
  maxResponseBytes?: number;
}

export interface ClusterResponse {
  status: number;
  body: Uint8Array;
  headers: IncomingMessage['headers'];
}

function isLoopbackName(hostname: string): boolean {
  const name = hostname.toLowerCase().replace(/\.$/, '');
  return name === 'localhost' || name.endsWith('.localhost');
}

type LookupCallback = (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/** dns.lookup, except that *.localhost is 127.0.0.1 without asking the resolver. */
export function loopbackAwareLookup(hostname: string, options: LookupOptions, callback: LookupCallback): void {
  if (isLoopbackName(hostname)) {
    if (options.all === true) callback(null, [{ address: '127.0.0.1', family: 4 }]);
    else callback(null, '127.0.0.1', 4);
    return;
  }
  dnsLookup(hostname, options, callback as never);
}

/**
 * Sends one signed request; the signature covers `url`'s origin, so address a peer by the
 * public URL it knows itself by (its `publicUrl`, or one of its `aliasUrls`). Rejects on network errors and timeouts, resolves for any HTTP status. */
export function clusterRequest(secret: string, url: string, request: ClusterRequest): Promise<ClusterResponse> {
  const target = new URL(url);
  const body = request.body ?? new Uint8Array(0);
  const maxResponseBytes = request.maxResponseBytes ?? 64 * 1024 * 1024;
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(request.headers ?? {})) headers[name.toLowerCase()] = value;
  if (request.body !== undefined && headers['content-type'] === undefined) headers['content-type'] = 'application/octet-stream';
  headers['content-length'] = String(body.byteLength);
  // The headers the receiver acts on (version, logical URL, content type) are signed too.
  headers[CLUSTER_AUTH_HEADER] = signClusterRequest(secret, request.method, target, body, { headers });
  const send = target.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise((resolve, reject) => {
    const outgoing = send(
      target,
      { method: request.method, headers, lookup: loopbackAwareLookup, signal: AbortSignal.timeout(request.timeoutMs) },
      (response) => {
        const chunks: Buffer[] = [];
        let bytes = 0;
        response.on('data', (chunk: Buffer) => {
          bytes += chunk.byteLength;
          if (bytes > maxResponseBytes) {
            response.destroy(new Error(`response from ${target.origin} exceeds ${maxResponseBytes} bytes`));
            return;
          }
          chunks.push(chunk);
        });
        response.on('error', reject);
        response.on('end', () => resolve({ status: response.statusCode ?? 0, body: new Uint8Array(Buffer.concat(chunks)), headers: response.headers }));
      },
    );
    outgoing.on('error', reject);
    outgoing.end(Buffer.from(body.buffer, body.byteOffset, body.byteLength));
  });
}
