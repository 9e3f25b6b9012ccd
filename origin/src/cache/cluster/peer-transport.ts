/**
 * The cooperative cache's connection to its peers: undici's Agent, one pool of keep-alive
 * connections per peer, instead of a node:http request per call. A cooperative miss is on
 * the request path, so its hop must cost a small fraction of an upstream render: undici's
 * request path is leaner than node:http's (no ClientRequest/IncomingMessage per call;
 * profiled in docs/origin.md, "Cooperative cache"). Requests go through the one signed
 * client, sync/cluster-client.ts, with this pool of connections.
 */
import { Agent } from 'undici';
import { clusterRequest, loopbackAwareLookup, type ClusterRequest, type ClusterResponse } from '../../sync/cluster-client.js';

/** Connections kept open to each peer (the requests of one server to one peer at once). */
const CONNECTIONS_PER_PEER = 16;
const KEEP_ALIVE_MS = 30_000;

export class PeerTransport {
  private readonly agent = new Agent({ connections: CONNECTIONS_PER_PEER, keepAliveTimeout: KEEP_ALIVE_MS, connect: { lookup: loopbackAwareLookup } });
  private closing: Promise<void> | undefined;

  constructor(private readonly secret: string) {}

  /** One signed request; rejects on network errors, timeouts and oversized answers, resolves for any status. */
  send(url: string, call: ClusterRequest): Promise<ClusterResponse> {
    return clusterRequest(this.secret, url, call, this.agent);
  }

  /** Closes the connections once requests in flight are answered (idempotent). */
  close(): Promise<void> {
    this.closing ??= this.agent.close();
    return this.closing;
  }
}
