/**
 * The cooperative cache's connection to its peers: undici's Agent, one pool of keep-alive
 * connections per peer, instead of a node:http request per call. A cooperative miss is on
 * the request path, so its hop must cost a small fraction of an upstream render: undici's
 * request path is leaner than node:http's (no ClientRequest/IncomingMessage per call;
 * profiled in docs/origin.md, "Cooperative cache"). Requests are signed exactly as
 * sync/cluster-client.ts signs them (http/auth.ts), and *.localhost names reach loopback.
 */
import { Agent, request } from 'undici';
import { CLUSTER_AUTH_HEADER, signClusterRequest } from '../../http/auth.js';
import { loopbackAwareLookup, type ClusterRequest, type ClusterResponse } from '../../sync/cluster-client.js';

/** Connections kept open to each peer (the requests of one server to one peer at once). */
const CONNECTIONS_PER_PEER = 16;
const KEEP_ALIVE_MS = 30_000;

export class PeerTransport {
  private readonly agent = new Agent({ connections: CONNECTIONS_PER_PEER, keepAliveTimeout: KEEP_ALIVE_MS, connect: { lookup: loopbackAwareLookup } });
  private closing: Promise<void> | undefined;

  constructor(private readonly secret: string) {}

  /** One signed request; rejects on network errors, timeouts and oversized answers, resolves for any status. */
  async send(url: string, call: ClusterRequest): Promise<ClusterResponse> {
    const body = call.body ?? new Uint8Array(0);
    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries(call.headers ?? {})) headers[name.toLowerCase()] = value;
    if (call.body !== undefined && headers['content-type'] === undefined) headers['content-type'] = 'application/octet-stream';
    headers['content-length'] = String(body.byteLength);
    headers[CLUSTER_AUTH_HEADER] = signClusterRequest(this.secret, call.method, url, body, { headers });
    const maxResponseBytes = call.maxResponseBytes ?? 64 * 1024 * 1024;
    const response = await request(url, {
      method: call.method,
      headers,
      body: call.body === undefined ? undefined : Buffer.from(body.buffer, body.byteOffset, body.byteLength),
      dispatcher: this.agent,
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

  /** Closes the connections once requests in flight are answered (idempotent). */
  close(): Promise<void> {
    this.closing ??= this.agent.close();
    return this.closing;
  }
}
