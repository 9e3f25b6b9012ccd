/**
 * A graceful stop for the server socket that startReplicaServer binds itself: stop
 * accepting connections, let the requests in flight finish (at most `timeoutMs`), and only
 * then close the app and destroy what is left. Fastify closes a server only when it
 * listened itself; here the socket was bound before the app (start-gate.ts), and close()
 * used to destroy every socket at once: SIGTERM cut every download and upload in progress,
 * although the docs promise that in-flight requests finish.
 *
 * While draining, HTTP/1.x responses carry `Connection: close`, so that keep-alive clients
 * leave instead of sending more requests (HTTP/2 has no Connection header: its sessions
 * end when the caller destroys the sockets).
 */
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Http2SecureServer, Http2ServerRequest, Http2ServerResponse } from 'node:http2';

export class InFlightRequests {
  private active = 0;
  private draining = false;
  private onIdle: (() => void) | undefined;

  constructor(server: Server | Http2SecureServer) {
    // Before the app's handler (prepended), so that the header is set before any response starts.
    server.prependListener('request', (request: IncomingMessage | Http2ServerRequest, response: ServerResponse | Http2ServerResponse) => {
      this.active += 1;
      if (this.draining && request.httpVersionMajor < 2 && !response.headersSent) response.setHeader('connection', 'close');
      response.once('close', () => {
        this.active -= 1;
        if (this.active === 0) this.onIdle?.();
      });
    });
  }

  /**
   * Stops the server accepting connections and resolves once no request is in flight, or
   * after `timeoutMs`; true when everything finished.
   */
  async drain(server: Server | Http2SecureServer, timeoutMs: number): Promise<boolean> {
    this.draining = true;
    if (server.listening) server.close();
    if ('closeIdleConnections' in server) server.closeIdleConnections();
    if (this.active === 0) return true;
    return new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => {
        this.onIdle = undefined;
        resolve(false);
      }, timeoutMs);
      this.onIdle = () => {
        clearTimeout(timer);
        this.onIdle = undefined;
        resolve(true);
      };
    });
  }
}
