/**
 * A signed server-to-server GET whose body is read as it arrives (sync/cluster-client.ts
 * buffers whole bodies; a lazy fetch streams the body through to clients meanwhile). The
 * head must come within `headTimeoutMs`; after it, the body may pause at most
 * `idleTimeoutMs` between chunks, or the response is destroyed with an error.
 */
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { CLUSTER_AUTH_HEADER, signClusterRequest } from '../http/auth.js';
import { loopbackAwareLookup } from '../sync/cluster-client.js';

export interface SignedStreamRequest {
  headers?: Record<string, string>;
  headTimeoutMs: number;
  idleTimeoutMs: number;
}

export function signedGetStream(secret: string, url: string, request: SignedStreamRequest): Promise<IncomingMessage> {
  const target = new URL(url);
  const headers: Record<string, string> = { 'content-length': '0' };
  for (const [name, value] of Object.entries(request.headers ?? {})) headers[name.toLowerCase()] = value;
  headers[CLUSTER_AUTH_HEADER] = signClusterRequest(secret, 'GET', target, new Uint8Array(0), { headers });
  const send = target.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise((resolve, reject) => {
    const headTimer = setTimeout(() => outgoing.destroy(new Error(`no answer from ${target.origin} within ${request.headTimeoutMs} ms`)), request.headTimeoutMs);
    const outgoing = send(target, { method: 'GET', headers, lookup: loopbackAwareLookup }, (response) => {
      clearTimeout(headTimer);
      response.setTimeout(request.idleTimeoutMs, () => response.destroy(new Error(`body from ${target.origin} stalled for ${request.idleTimeoutMs} ms`)));
      resolve(response);
    });
    outgoing.on('error', (error) => {
      clearTimeout(headTimer);
      reject(error);
    });
    outgoing.end();
  });
}
