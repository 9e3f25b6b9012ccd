/**
 * Signed server-to-server HTTP requests (see http/auth.ts for the signature scheme).
 */
import { CLUSTER_AUTH_HEADER, signClusterRequest } from '../http/auth.js';

export interface ClusterRequest {
  method: 'POST' | 'PUT' | 'DELETE' | 'GET';
  body?: Uint8Array;
  headers?: Record<string, string>;
  timeoutMs: number;
}

export interface ClusterResponse {
  status: number;
  body: Uint8Array;
  headers: Headers;
}

/** Sends one signed request; rejects on network errors and timeouts, resolves for any HTTP status. */
export async function clusterRequest(secret: string, url: string, request: ClusterRequest): Promise<ClusterResponse> {
  const target = new URL(url);
  const body = request.body ?? new Uint8Array(0);
  const headers: Record<string, string> = {
    ...request.headers,
    [CLUSTER_AUTH_HEADER]: signClusterRequest(secret, request.method, target.pathname + target.search, body),
  };
  if (request.body !== undefined && headers['content-type'] === undefined) headers['content-type'] = 'application/octet-stream';
  const response = await fetch(target, {
    method: request.method,
    headers,
    body: request.method === 'GET' ? undefined : body,
    signal: AbortSignal.timeout(request.timeoutMs),
    redirect: 'error',
  });
  return { status: response.status, body: new Uint8Array(await response.arrayBuffer()), headers: response.headers };
}
