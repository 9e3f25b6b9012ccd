/**
 * The cooperative cache's outgoing peer calls (formats in peer-protocol.ts), signed with
 * the cluster secret and sent over pooled keep-alive connections (peer-transport.ts). A
 * call that fails at the network level marks the peer down in the membership (its objects
 * get other homes at once); any answer marks it up. Every call names its sender (`from`) in the query string, which the
 * signature covers; state-changing calls also carry a one-time nonce (replay-guard.ts).
 */
import type { ClusterResponse } from '../../sync/cluster-client.js';
import { PeerTransport } from './peer-transport.js';
import { newNonce, NONCE_PARAM } from './replay-guard.js';
import {
  CACHE_COUNT_HEADER,
  CACHE_HOLDER_HEADER,
  decodeObject,
  encodeObject,
  OBJECT_CONTENT_TYPE,
  PEER_CACHE_COUNTS_PATH,
  PEER_CACHE_INVALIDATE_PATH,
  PEER_CACHE_OBJECT_PATH,
  type CacheObject,
  type CountReportBody,
  type InvalidateBody,
  type PushReason,
} from './peer-protocol.js';
import type { Membership } from './membership.js';

export interface LookupAnswer {
  object: CacheObject | undefined;
  /** A server the home says holds a copy (only from a home's 404). */
  holder: string | undefined;
  /** The answering server's global count of the path. */
  count: number | undefined;
}

export interface PeerClientOptions {
  secret: string;
  timeoutMs: number;
  membership: Membership;
  /** Largest object accepted from a peer. */
  maxObjectBytes: number;
}

function headerOf(response: ClusterResponse, name: string): string | undefined {
  const value = response.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

function countOf(response: ClusterResponse): number | undefined {
  const value = Number(headerOf(response, CACHE_COUNT_HEADER));
  return Number.isFinite(value) && value >= 0 ? value : undefined;
}

export class PeerClient {
  private readonly transport: PeerTransport;

  constructor(private readonly options: PeerClientOptions) {
    this.transport = new PeerTransport(options.secret);
  }

  /** Closes the pooled connections to the peers. */
  close(): Promise<void> {
    return this.transport.close();
  }

  /** Asks `peer` for `path` from its memory (`asHome`: the peer may name a holder instead). */
  async lookup(peer: string, path: string, asHome: boolean): Promise<LookupAnswer> {
    const query = `path=${encodeURIComponent(path)}${asHome ? '&home=1' : ''}&${this.from()}`;
    const response = await this.call(peer, 'GET', `${PEER_CACHE_OBJECT_PATH}?${query}`, undefined, this.options.maxObjectBytes + 512 * 1024);
    const count = countOf(response);
    if (response.status === 200) return { object: decodeObject(path, response.body), holder: undefined, count };
    const holder = headerOf(response, CACHE_HOLDER_HEADER);
    return { object: undefined, holder: holder !== undefined && this.options.membership.peers.includes(holder) ? holder : undefined, count };
  }

  /** Sends a copy to `peer`; resolves true when the peer kept it. */
  async push(peer: string, object: CacheObject, reason: PushReason, recirculation: number): Promise<boolean> {
    const body = encodeObject(object, { reason, recirculation });
    const response = await this.call(peer, 'POST', `${PEER_CACHE_OBJECT_PATH}?path=${encodeURIComponent(object.path)}&${this.from()}&${this.nonce()}`, body, 64 * 1024, OBJECT_CONTENT_TYPE);
    return response.status === 201;
  }

  /** Reports local counts to `peer` (their home); resolves with the new global counts. */
  async report(peer: string, report: CountReportBody): Promise<[string, number][]> {
    const body = Buffer.from(JSON.stringify(report), 'utf8');
    const response = await this.call(peer, 'POST', `${PEER_CACHE_COUNTS_PATH}?${this.from()}&${this.nonce()}`, body, 16 * 1024 * 1024, 'application/json');
    if (response.status !== 200) throw new Error(`count report refused by ${peer}: ${response.status}`);
    const parsed = JSON.parse(Buffer.from(response.body).toString('utf8')) as { counts?: unknown };
    if (!Array.isArray(parsed.counts)) throw new Error(`count report answer from ${peer} has no counts`);
    return parsed.counts.filter((entry): entry is [string, number] => Array.isArray(entry) && typeof entry[0] === 'string' && typeof entry[1] === 'number');
  }

  /** Asks `peer` to remove its copies; resolves once it has (2xx), rejects otherwise. */
  async invalidate(peer: string, body: InvalidateBody): Promise<void> {
    const bytes = Buffer.from(JSON.stringify(body), 'utf8');
    const response = await this.call(peer, 'POST', `${PEER_CACHE_INVALIDATE_PATH}?${this.from()}&${this.nonce()}`, bytes, 64 * 1024, 'application/json');
    if (response.status !== 200) throw new Error(`invalidation refused by ${peer}: ${response.status}`);
  }

  /** The sender, in the signed query string (so it cannot be altered). */
  private from(): string {
    return `from=${encodeURIComponent(this.options.membership.self)}`;
  }

  private nonce(): string {
    return `${NONCE_PARAM}=${newNonce()}`;
  }

  private async call(peer: string, method: 'GET' | 'POST', pathAndQuery: string, body: Uint8Array | undefined, maxResponseBytes: number, contentType?: string): Promise<ClusterResponse> {
    const { membership } = this.options;
    try {
      const response = await this.transport.send(`${peer}${pathAndQuery}`, {
        method,
        body,
        headers: contentType === undefined ? {} : { 'content-type': contentType },
        timeoutMs: this.options.timeoutMs,
        maxResponseBytes,
      });
      // A peer still starting (503) or without the cache (404 on the route) is not down.
      membership.markUp(peer);
      return response;
    } catch (error) {
      membership.markDown(peer);
      throw error;
    }
  }
}
