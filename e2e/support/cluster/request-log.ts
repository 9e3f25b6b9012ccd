/**
 * What a replica server was asked: every request its real socket received (tapped on the
 * node server's "request" event, before Fastify and the webpp plugin), with its headers.
 */
import type { IncomingMessage } from 'node:http';

export interface RequestLogEntry {
  method: string;
  /** Path and query, as received. */
  url: string;
  headers: Record<string, string | string[] | undefined>;
  /** "1.1" or "2.0". */
  httpVersion: string;
  /** The request body, for routes that read one (e.g. /api/echo). */
  body?: string;
  atMs: number;
}

const ENTRY = Symbol('webpp.cluster.logEntry');

export class RequestLog {
  readonly entries: RequestLogEntry[] = [];

  record(request: IncomingMessage): void {
    const entry: RequestLogEntry = {
      method: request.method ?? 'GET',
      url: request.url ?? '/',
      headers: { ...request.headers },
      httpVersion: request.httpVersion,
      atMs: Date.now(),
    };
    (request as IncomingMessage & { [ENTRY]?: RequestLogEntry })[ENTRY] = entry;
    this.entries.push(entry);
  }

  /** The entry of a raw request, to add what a route read (its body). */
  static entryOf(request: IncomingMessage): RequestLogEntry | undefined {
    return (request as IncomingMessage & { [ENTRY]?: RequestLogEntry })[ENTRY];
  }

  /** Requests for a path (optionally one method), e.g. requests('/img/1.png', 'HEAD'). */
  filter(path?: string, method?: string): RequestLogEntry[] {
    return this.entries.filter(
      (entry) => (path === undefined || entry.url.split('?')[0] === path) && (method === undefined || entry.method === method),
    );
  }

  clear(): void {
    this.entries.length = 0;
  }
}
