/**
 * The one signed server-to-server HTTP client (see http/auth.ts for the signature scheme),
 * on undici: sync, pings, the replica push and its reconciler, lazy copies (streamed) and
 * the cooperative cache (its own pool, cache/cluster/peer-transport.ts) all send through
 * it. Host names "localhost" and "*.localhost" always reach the loopback interface, as
 * RFC 6761 §6.3 asks and browsers do, even where the system resolver does not know them,
 * so that clusters named a.localhost, b.localhost, … work everywhere.
 */
import { lookup as dnsLookup, type LookupAddress, type LookupOptions } from 'node:dns';
import type { IncomingHttpHeaders } from 'node:http';
import type { Readable } from 'node:stream';
import { Agent, request as undiciRequest, type Dispatcher } from 'undici';
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
  headers: IncomingHttpHeaders;
}

export interface SignedStreamRequest {
  headers?: Record<string, string>;
  /** The status and headers must come within this time. */
  headTimeoutMs: number;
  /** After them, the body may pause at most this long between chunks. */
  idleTimeoutMs: number;
}

/** A response whose body is read as it arrives. */
export interface SignedStreamResponse {
  statusCode: number;
  headers: IncomingHttpHeaders;
  body: Readable;
}

const DEFAULT_MAX_RESPONSE_BYTES = 64 * 1024 * 1024;

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
 * Keep-alive connections to peers, shared by the calls of this process that bring no pool
 * of their own. Idle sockets do not keep the process alive (undici unrefs them).
 */
const sharedPeerPool = new Agent({ connect: { lookup: loopbackAwareLookup } });

/**
 * The headers of one signed call: lower-cased, a content type for a body, its length, and
 * the signature, which covers the target's origin, the method, the body and the headers
 * the receiver acts on (version, logical URL, content type).
 */
function signedHeaders(secret: string, method: string, url: string, body: Uint8Array, given: Record<string, string> | undefined, hasBody: boolean): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(given ?? {})) headers[name.toLowerCase()] = value;
  if (hasBody && headers['content-type'] === undefined) headers['content-type'] = 'application/octet-stream';
  headers['content-length'] = String(body.byteLength);
  headers[CLUSTER_AUTH_HEADER] = signClusterRequest(secret, method, url, body, { headers });
  return headers;
}

/**
 * Sends one signed request and reads the whole answer; the signature covers `url`'s origin,
 * so address a peer by the public URL it knows itself by (its `publicUrl`, or one of its
 * `aliasUrls`). Rejects on network errors, timeouts and answers over `maxResponseBytes`;
 * resolves for any HTTP status.
 */
export async function clusterRequest(secret: string, url: string, call: ClusterRequest, pool: Dispatcher = sharedPeerPool): Promise<ClusterResponse> {
  const body = call.body ?? new Uint8Array(0);
  const maxResponseBytes = call.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES;
  const response = await undiciRequest(url, {
    method: call.method,
    headers: signedHeaders(secret, call.method, url, body, call.headers, call.body !== undefined),
    body: call.body === undefined ? undefined : Buffer.from(body.buffer, body.byteOffset, body.byteLength),
    dispatcher: pool,
    signal: AbortSignal.timeout(call.timeoutMs),
  });
  const chunks: Buffer[] = [];
  let bytes = 0;
  for await (const chunk of response.body as AsyncIterable<Buffer>) {
    bytes += chunk.byteLength;
    if (bytes > maxResponseBytes) {
      response.body.destroy();
      throw new Error(`response from ${new URL(url).origin} exceeds ${maxResponseBytes} bytes`);
    }
    chunks.push(chunk);
  }
  return { status: response.statusCode, body: new Uint8Array(Buffer.concat(chunks, bytes)), headers: response.headers };
}

/**
 * A signed GET whose body is read as it arrives (a lazy copy streams it through to clients
 * meanwhile). The head must come within `headTimeoutMs`; after it, a body that pauses
 * longer than `idleTimeoutMs` between chunks ends with an error.
 */
export async function signedGetStream(secret: string, url: string, call: SignedStreamRequest, pool: Dispatcher = sharedPeerPool): Promise<SignedStreamResponse> {
  const response = await undiciRequest(url, {
    method: 'GET',
    headers: signedHeaders(secret, 'GET', url, new Uint8Array(0), call.headers, false),
    dispatcher: pool,
    headersTimeout: call.headTimeoutMs,
    bodyTimeout: call.idleTimeoutMs,
  });
  return { statusCode: response.statusCode, headers: response.headers, body: response.body };
}
