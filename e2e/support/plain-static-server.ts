/**
 * A plain static file server that knows nothing of webpp: `node:http` and the file system,
 * as a static host or a CDN serves a folder. It answers GET and HEAD with Content-Type,
 * Last-Modified and ETag (304 on If-None-Match / If-Modified-Since), `index.html` for
 * folders, and 404 otherwise. Options make it behave like the hosts of
 * docs/static-hosting.md:
 *  - `applyHeadersFile`: reads `_headers` (Netlify / Cloudflare Pages format) and applies
 *    the rules that match the path (`/*` and exact paths);
 *  - `cors`: adds `Access-Control-Allow-Origin: *` and `Timing-Allow-Origin: *` itself, and
 *    answers CORS preflights, as a CDN configured for it does;
 *  - `delayMs`: waits before answering (a mirror farther away).
 * `stop()` closes the socket and every connection (the host goes down); `start()` listens
 * again on the same port.
 */
import { createReadStream } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { extname, join, normalize, sep } from 'node:path';

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.png': 'image/png',
  '.txt': 'text/plain; charset=utf-8',
};

export interface PlainStaticOptions {
  host: string;
  applyHeadersFile?: boolean;
  cors?: boolean;
  delayMs?: number;
}

export interface LoggedRequest {
  method: string;
  path: string;
  status: number;
}

export class PlainStaticServer {
  /** Folder served; set before the first request. */
  root = '';
  port = 0;
  readonly log: LoggedRequest[] = [];
  private server: Server | undefined;

  constructor(readonly options: PlainStaticOptions) {}

  get origin(): string {
    return `http://${this.options.host}:${this.port}`;
  }

  async start(): Promise<void> {
    const server = createServer((request, response) => {
      setTimeout(() => void this.handle(request, response).catch(() => response.destroy()), this.options.delayMs ?? 0);
    });
    await new Promise<void>((done) => server.listen(this.port, '127.0.0.1', done));
    const address = server.address();
    if (typeof address === 'object' && address !== null) this.port = address.port;
    this.server = server;
  }

  async stop(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    if (server === undefined) return;
    const closed = new Promise((done) => server.close(done));
    server.closeAllConnections();
    await closed;
  }

  private async handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const path = decodeURIComponent(new URL(request.url ?? '/', 'http://x').pathname);
    const method = request.method ?? 'GET';
    const answer = (status: number): void => {
      this.log.push({ method, path, status });
      response.statusCode = status;
    };
    if (this.options.cors === true) {
      response.setHeader('access-control-allow-origin', '*');
      response.setHeader('timing-allow-origin', '*');
    }
    if (method === 'OPTIONS' && this.options.cors === true) {
      answer(204);
      response.setHeader('access-control-allow-methods', 'GET, HEAD');
      response.setHeader('access-control-allow-headers', request.headers['access-control-request-headers'] ?? '');
      return void response.end();
    }
    if (method !== 'GET' && method !== 'HEAD') return void (answer(405), response.end());
    let file = normalize(join(this.root, path));
    if (!file.startsWith(this.root + sep) && file !== this.root) return void (answer(404), response.end());
    let info = await stat(file).catch(() => undefined);
    if (info?.isDirectory() === true) {
      file = join(file, 'index.html');
      info = await stat(file).catch(() => undefined);
    }
    if (info === undefined || !info.isFile() || path === '/_headers') return void (answer(404), response.end('not found'));
    if (this.options.applyHeadersFile === true) await this.applyHeaders(path, response);
    const etag = `"${info.size.toString(16)}-${Math.floor(info.mtimeMs).toString(16)}"`;
    const lastModified = new Date(Math.floor(info.mtimeMs / 1000) * 1000).toUTCString();
    response.setHeader('etag', etag);
    response.setHeader('last-modified', lastModified);
    response.setHeader('content-type', TYPES[extname(file)] ?? 'application/octet-stream');
    const since = request.headers['if-modified-since'];
    if (request.headers['if-none-match'] === etag || (since !== undefined && Date.parse(since) >= Date.parse(lastModified))) {
      return void (answer(304), response.end());
    }
    answer(200);
    response.setHeader('content-length', info.size);
    if (method === 'HEAD') return void response.end();
    createReadStream(file).pipe(response);
  }

  /** Netlify's rule: every `_headers` rule whose path matches (exactly, or by a trailing `*`) applies. */
  private async applyHeaders(path: string, response: ServerResponse): Promise<void> {
    const text = await readFile(join(this.root, '_headers'), 'utf8').catch(() => '');
    let applies = false;
    for (const line of text.split('\n')) {
      if (line.trim() === '' || line.trimStart().startsWith('#')) continue;
      if (!/^\s/.test(line)) {
        const rule = line.trim();
        applies = rule === path || (rule.endsWith('*') && path.startsWith(rule.slice(0, -1)));
        continue;
      }
      const colon = line.indexOf(':');
      if (applies && colon > 0) response.setHeader(line.slice(0, colon).trim(), line.slice(colon + 1).trim());
    }
  }
}
