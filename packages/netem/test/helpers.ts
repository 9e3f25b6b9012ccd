/** Test helpers: a real upstream HTTP server on a loopback ephemeral port, and a timing HTTP client. */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';

export interface Upstream {
  url: string;
  /** Host headers the upstream saw, in order. */
  hosts: string[];
  close(): Promise<void>;
}

/**
 * GET /bytes/N → N bytes ("x"), with Content-Length; /chunked/N → N bytes without it;
 * /host → the Host header it received. Anything else → 404.
 */
export async function startUpstream(): Promise<Upstream> {
  const hosts: string[] = [];
  const server = http.createServer((req, res) => {
    hosts.push(req.headers.host ?? '');
    const [, route, size] = (req.url ?? '/').split('/');
    const bytes = Math.min(Number(size) || 0, 10_000_000);
    if (route === 'bytes') {
      res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': bytes, 'x-upstream': 'yes' });
      res.end(req.method === 'HEAD' ? undefined : Buffer.alloc(bytes, 'x'));
    } else if (route === 'chunked') {
      res.writeHead(200, { 'content-type': 'application/octet-stream' });
      res.end(Buffer.alloc(bytes, 'y'));
    } else if (route === 'peer') {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.end(req.socket.remoteAddress ?? '');
    } else if (route === 'host') {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.end(req.headers.host ?? '');
    } else {
      res.writeHead(404);
      res.end();
    }
  });
  // Upgrade: echo → 101, then echoes every byte back (a stand-in for a WebSocket).
  server.on('upgrade', (req, socket) => {
    hosts.push(req.headers.host ?? '');
    socket.write('HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: echo\r\n\r\n');
    socket.pipe(socket);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    hosts,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export interface Timed {
  status: number;
  body: Buffer;
  headers: http.IncomingHttpHeaders;
  /** From sending the request to the response head. */
  firstByteMs: number;
  /** From sending the request to the last body byte. */
  completeMs: number;
  reusedSocket: boolean;
}

export interface TimedGetOptions {
  agent?: http.Agent;
  method?: string;
  headers?: Record<string, string>;
  /** Abort (reject with "timeout") when no response head has arrived after this long. */
  headTimeoutMs?: number;
}

/** One HTTP request with timings measured on performance.now(). Rejects with the socket error code. */
export function timedGet(url: string, options: TimedGetOptions = {}): Promise<Timed> {
  return new Promise((resolve, reject) => {
    const startMs = performance.now();
    const req = http.request(url, { method: options.method ?? 'GET', agent: options.agent ?? false, headers: options.headers ?? {} });
    let timer: NodeJS.Timeout | undefined;
    if (options.headTimeoutMs !== undefined) {
      timer = setTimeout(() => {
        req.destroy(Object.assign(new Error('timeout'), { code: 'TIMEOUT' }));
      }, options.headTimeoutMs);
    }
    req.on('response', (res) => {
      clearTimeout(timer);
      const firstByteMs = performance.now() - startMs;
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('error', reject);
      res.on('aborted', () => reject(Object.assign(new Error('aborted'), { code: 'ECONNRESET' })));
      res.on('end', () =>
        resolve({
          status: res.statusCode ?? 0,
          body: Buffer.concat(chunks),
          headers: res.headers,
          firstByteMs,
          completeMs: performance.now() - startMs,
          reusedSocket: req.reusedSocket,
        }),
      );
    });
    req.on('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    req.end();
  });
}

/** The error code a request fails with (or "ok" when it succeeds). */
export async function outcomeOf(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
    return 'ok';
  } catch (error) {
    return (error as NodeJS.ErrnoException).code ?? String(error);
  }
}

/** Polls `check` every 20 ms until it returns true, for at most `timeoutMs`. */
export async function waitFor(check: () => boolean | Promise<boolean>, timeoutMs = 5000): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (!(await check())) {
    if (performance.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
