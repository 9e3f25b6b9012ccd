/**
 * The start gate: the request listener of a server socket that is bound before its app is
 * ready. startReplicaServer binds first (so that port 0 gives a real port for the public
 * URL), then builds the Fastify app. A request that reached Fastify's handler in that
 * window used to throw inside Fastify's hook runner and end the process, so that three
 * servers started together killed each other with their first sync.
 *
 * Until `open()`, the gate answers every request itself:
 *
 *   503 Service Unavailable, Retry-After: 1, Connection: close
 *   {"statusCode":503,"code":"WEBPP_ERR_STARTING","error":"Service Unavailable","message":"…"}
 *
 * Peers treat it like any other 5xx: the directory sync and replica pushes are retried
 * (peer-sync.ts honours Retry-After for an early retry). After `open()`, every request
 * goes to Fastify; a synchronous throw that escapes Fastify's own error handling is
 * logged and answered with 500 instead of ending the process.
 *
 * The gate serves node:http servers and HTTPS + HTTP/2 servers alike (http2's compatibility
 * API gives it Http2ServerRequest/Http2ServerResponse, or http1 objects for ALPN fallback).
 * HTTP/2 has no Connection header: there the stream is closed and the session stays.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Http2ServerRequest, Http2ServerResponse } from 'node:http2';
import { WEBPP_ERR_STARTING } from '../errors.js';

const STARTING_RETRY_AFTER_S = 1;

type GateRequest = IncomingMessage | Http2ServerRequest;
type GateResponse = ServerResponse | Http2ServerResponse;
export type GateHandler = (request: GateRequest, response: GateResponse) => void;

interface GateLogger {
  error(object: object, message: string): void;
}

const starting = new WEBPP_ERR_STARTING();
const STARTING_BODY = JSON.stringify({
  statusCode: starting.statusCode,
  code: starting.code,
  error: 'Service Unavailable',
  message: starting.message,
});

export class StartGate {
  private target: GateHandler | undefined;
  private log: GateLogger | undefined;
  private opened = false;

  /** The listener to give to http.createServer(). */
  readonly handler: GateHandler = (request, response) => {
    if (!this.opened || this.target === undefined) {
      answerStarting(request, response);
      return;
    }
    try {
      this.target(request, response);
    } catch (error) {
      this.log?.error({ err: error, method: request.method, url: request.url }, 'request handler threw outside Fastify; answered 500');
      if (!response.headersSent) {
        response.statusCode = 500;
        response.setHeader('content-type', 'application/json; charset=utf-8');
        response.end(JSON.stringify({ statusCode: 500, error: 'Internal Server Error', message: 'internal error' }));
      } else {
        response.destroy();
      }
    }
  };

  /** Fastify's request handler (from serverFactory); not used before open(). */
  setHandler(handler: GateHandler): void {
    this.target = handler;
  }

  /** From now on requests reach the app. */
  open(log: GateLogger): void {
    this.log = log;
    this.opened = true;
  }

  get isOpen(): boolean {
    return this.opened;
  }
}

function answerStarting(request: GateRequest, response: GateResponse): void {
  response.statusCode = 503;
  response.setHeader('retry-after', String(STARTING_RETRY_AFTER_S));
  response.setHeader('content-type', 'application/json; charset=utf-8');
  response.setHeader('cache-control', 'no-store');
  // The request body (a peer's sync message, an upload) is not read: close the connection
  // rather than leave unread bytes in front of the next request (HTTP/1.x only; an HTTP/2
  // stream ends on its own and carries no connection headers).
  if (request.httpVersionMajor < 2) response.setHeader('connection', 'close');
  response.end(STARTING_BODY);
}
