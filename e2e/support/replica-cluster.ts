/**
 * A cluster of replica servers for end-to-end tests and benchmarks: each replica is a real
 * Fastify server on 127.0.0.1 with an ephemeral port, reached by Chromium under its own
 * origin `http://<name>.localhost:<port>`. Every replica serves the same site, sends the
 * bindings header (@webpp/core's encoder) and CORS headers like @webpp/origin does, and
 * serves /webpp.js and /webpp-sw.js from sw/bundle/.
 *
 * Tests can inject a delay before the response headers, stall a replica (no answer until
 * released), kill and restart it on the same port, make it answer with a fixed status, and
 * read its request log.
 *
 * The logical URL of a resource is its URL on the primary (the first replica).
 */
import { readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import Fastify from 'fastify';
import type { FastifyInstance, FastifyReply } from 'fastify';
import { BINDINGS_HEADER, CONTROL_HEADER, encodeBindings } from '@webpp/core';
import type { Binding } from '@webpp/core';

const BUNDLE_DIR = new URL('../../sw/bundle/', import.meta.url);

interface SiteFile {
  contentType: string;
  /** Answer with a 301 redirect to this path instead of a body. */
  redirectTo?: string;
  /** The body, or a function of the replica's name (to tell replicas apart in tests). */
  body: string | Buffer | ((replica: string) => string | Buffer);
  cacheControl?: string;
}

/** Path ("/index.html") → file. "/" serves "/index.html". */
export type Site = Record<string, SiteFile>;

export interface RequestLogEntry {
  method: string;
  /** Path and query, as received. */
  url: string;
  headers: Record<string, string | string[] | undefined>;
  body?: string;
  atMs: number;
}

export interface ReplicaClusterOptions {
  site: Site;
  /** Replica names; each becomes host "<name>.localhost". Default ["a", "b", "c"]. The first is the primary. */
  names?: string[];
  /** Injected delay before each response's headers, per replica name. Default 0. */
  delaysMs?: Record<string, number>;
  /** Which paths each replica holds (default: all). Paths it does not hold answer 404. */
  holds?: Record<string, string[]>;
  /** Options passed to the worker through the page script tag, e.g. { preset: 'fast' }. */
  workerParams?: Record<string, string | number>;
  directoryVersion?: number;
  /** HTML that replaces `<!--webpp-->` in pages instead of the /webpp.js script tag. */
  pageScript?: string;
}

type HeaderOverride = (path: string, replica: string) => string | undefined;

const WORKER_FILES: Record<string, string> = { '/webpp.js': 'webpp.js', '/webpp-sw.js': 'webpp-sw.js' };

export class Replica {
  readonly name: string;
  readonly host: string;
  port = 0;
  delayMs: number;
  /** When set, every request (except the worker scripts) is answered with this status. */
  forcedStatus: number | undefined;
  /**
   * When set, a full-body GET of a file larger than this sends its headers (with the full
   * Content-Length) and this many bytes of the body, then destroys the socket: a replica
   * that dies while streaming a large file. Range requests are answered normally.
   */
  breakBodyAfterBytes: number | undefined;
  readonly log: RequestLogEntry[] = [];
  private app: FastifyInstance | undefined;
  private stalled = false;
  private readonly stallWaiters = new Set<() => void>();

  constructor(
    name: string,
    delayMs: number,
    private readonly cluster: ReplicaCluster,
  ) {
    this.name = name;
    this.host = `${name}.localhost`;
    this.delayMs = delayMs;
  }

  get origin(): string {
    return `http://${this.host}:${this.port}`;
  }

  get running(): boolean {
    return this.app !== undefined;
  }

  url(path: string): string {
    return `${this.origin}${path}`;
  }

  /** Requests received for a path (optionally one method), e.g. replica.requests('/img/1.png', 'HEAD'). */
  requests(path?: string, method?: string): RequestLogEntry[] {
    return this.log.filter(
      (entry) => (path === undefined || entry.url.split('?')[0] === path) && (method === undefined || entry.method === method),
    );
  }

  clearLog(): void {
    this.log.length = 0;
  }

  /** Holds every response until release() (a hung server), without closing connections. */
  stall(): void {
    this.stalled = true;
  }

  release(): void {
    this.stalled = false;
    for (const wake of this.stallWaiters) wake();
    this.stallWaiters.clear();
  }

  /** Starts listening (again, on the same port after a kill). */
  async start(): Promise<void> {
    if (this.app) return;
    const app = buildReplicaApp(this, this.cluster);
    await app.listen({ port: this.port, host: '127.0.0.1' });
    this.port = (app.server.address() as AddressInfo).port;
    this.app = app;
  }

  /** Stops the server at once, dropping open connections (a crashed server). */
  async kill(): Promise<void> {
    const app = this.app;
    if (!app) return;
    this.app = undefined;
    this.release();
    app.server.closeAllConnections();
    await app.close();
  }

  /** @internal */
  async waitWhileStalled(): Promise<void> {
    while (this.stalled) await new Promise<void>((wake) => this.stallWaiters.add(wake));
  }
}

export class ReplicaCluster {
  readonly replicas: Replica[];
  readonly site: Site;
  workerParams: Record<string, string | number>;
  directoryVersion: number;
  /** Replaces the bindings header (return undefined to send none). */
  bindingsOverride: HeaderOverride | undefined;
  /** Sends `webpp-control: off` on every response when true. */
  controlOff = false;
  pageScript: string | undefined;
  private readonly holds: Record<string, string[]> | undefined;

  private constructor(options: ReplicaClusterOptions) {
    const names = options.names ?? ['a', 'b', 'c'];
    this.site = options.site;
    this.holds = options.holds;
    this.workerParams = options.workerParams ?? { preset: 'fast' };
    this.directoryVersion = options.directoryVersion ?? 1;
    this.pageScript = options.pageScript;
    this.replicas = names.map((name) => new Replica(name, options.delaysMs?.[name] ?? 0, this));
  }

  static async start(options: ReplicaClusterOptions): Promise<ReplicaCluster> {
    const cluster = new ReplicaCluster(options);
    try {
      for (const replica of cluster.replicas) await replica.start();
    } catch (error) {
      await cluster.stop();
      throw error;
    }
    return cluster;
  }

  get primary(): Replica {
    return this.replicas[0] as Replica;
  }

  replica(name: string): Replica {
    const replica = this.replicas.find((candidate) => candidate.name === name);
    if (!replica) throw new Error(`no replica named ${name}`);
    return replica;
  }

  /** The replica serving a server id ("http://b.localhost:1234"). */
  byOrigin(origin: string): Replica | undefined {
    return this.replicas.find((replica) => replica.origin === origin);
  }

  /** The logical URL of a path: its URL on the primary. */
  logicalUrl(path: string): string {
    return this.primary.url(path);
  }

  holdsPath(replica: Replica, path: string): boolean {
    const held = this.holds?.[replica.name];
    return held === undefined || held.includes(path);
  }

  /** The bindings of the whole site: one exact binding per path, listing the replicas that hold it. */
  bindings(): Binding[] {
    const paths = Object.keys(this.site);
    if (paths.includes('/index.html')) paths.push('/');
    return paths.map((path) => ({
      logical: this.logicalUrl(path),
      prefix: false,
      replicas: this.replicas
        .filter((replica) => this.holdsPath(replica, path === '/' ? '/index.html' : path))
        .map((replica) => replica.url(path)),
    }));
  }

  /**
   * What @webpp/origin sends: an HTML page carries the bindings of the whole site (in a
   * real origin: of every URL it references, and its own); any other resource its own.
   */
  bindingsHeader(path: string, replica: Replica): string | undefined {
    if (this.bindingsOverride) return this.bindingsOverride(path, replica.name);
    const all = this.bindings();
    const isPage = this.site[path]?.contentType.startsWith('text/html') ?? false;
    const logical = this.logicalUrl(path);
    const bindings = isPage ? all : all.filter((binding) => binding.logical === logical);
    if (bindings.length === 0) return undefined;
    return encodeBindings({ directoryVersion: this.directoryVersion, bindings }).value;
  }

  /** The page script tag with the cluster's worker parameters. */
  scriptTag(): string {
    if (this.pageScript !== undefined) return this.pageScript;
    const attributes = Object.entries(this.workerParams)
      .map(([key, value]) => ` data-${key.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}="${String(value)}"`)
      .join('');
    return `<script src="/webpp.js"${attributes} async></script>`;
  }

  async stop(): Promise<void> {
    await Promise.all(this.replicas.map((replica) => replica.kill()));
  }
}

function buildReplicaApp(replica: Replica, cluster: ReplicaCluster): FastifyInstance {
  const app = Fastify({ logger: false, forceCloseConnections: true });

  app.addHook('onRequest', async (request) => {
    replica.log.push({
      method: request.method,
      url: request.url,
      headers: { ...request.headers },
      atMs: Date.now(),
    });
    await replica.waitWhileStalled();
    if (replica.delayMs > 0) await new Promise((resolve) => setTimeout(resolve, replica.delayMs));
  });

  app.addHook('onSend', async (request, reply) => {
    // What @webpp/origin sends on replicated resources: CORS for the worker's cross-origin
    // fetches, every header exposed (bindings included), timing for Resource Timing.
    reply.header('access-control-allow-origin', '*');
    reply.header('access-control-expose-headers', '*');
    reply.header('timing-allow-origin', '*');
    if (cluster.controlOff) reply.header(CONTROL_HEADER, 'off');
    const path = request.url.split('?')[0] ?? '/';
    if (!(path in WORKER_FILES) && request.method !== 'OPTIONS') {
      const header = cluster.bindingsHeader(path === '/' ? '/index.html' : path, replica);
      if (header !== undefined) reply.header(BINDINGS_HEADER, header);
    }
  });

  // CORS preflight (conditional headers are not CORS-safelisted).
  app.options('/*', async (request, reply) => {
    reply
      .code(204)
      .header('access-control-allow-methods', 'GET, HEAD')
      .header('access-control-allow-headers', request.headers['access-control-request-headers'] ?? '*')
      .header('access-control-max-age', '600');
    return reply.send();
  });

  app.post('/api/echo', async (request, reply) => {
    const last = replica.log[replica.log.length - 1];
    if (last) last.body = typeof request.body === 'string' ? request.body : JSON.stringify(request.body);
    return reply.header('cache-control', 'no-store').send({ replica: replica.name, received: request.body });
  });
  app.addContentTypeParser('text/plain', { parseAs: 'string' }, (_request, body, done) => done(null, body));

  // A replica-specific cookie, to check that cookies never reach other origins.
  app.get('/set-cookie', async (_request, reply) =>
    reply
      .header('set-cookie', `replica-${replica.name}=secret; Path=/; SameSite=None; Secure`)
      .header('content-type', 'text/html; charset=utf-8')
      .send('<!doctype html><title>cookie set</title>'),
  );

  app.route({
    method: ['GET', 'HEAD'],
    url: '/*',
    handler: async (request, reply) => {
      const path = (request.url.split('?')[0] ?? '/') === '/' ? '/index.html' : (request.url.split('?')[0] as string);
      const workerFile = WORKER_FILES[path];
      if (workerFile) {
        return reply
          .header('content-type', 'text/javascript; charset=utf-8')
          .header('cache-control', 'no-cache')
          .send(readFileSync(new URL(workerFile, BUNDLE_DIR)));
      }
      if (replica.forcedStatus !== undefined) {
        return reply.code(replica.forcedStatus).header('content-type', 'text/plain').send(`forced ${replica.forcedStatus}`);
      }
      const file = cluster.site[path];
      if (!file || !cluster.holdsPath(replica, path)) {
        return reply.code(404).header('content-type', 'text/plain').send('not found');
      }
      if (file.redirectTo !== undefined) return reply.code(301).header('location', file.redirectTo).send();
      let body = typeof file.body === 'function' ? file.body(replica.name) : file.body;
      if (typeof body === 'string' && file.contentType.startsWith('text/html')) {
        body = body.replace('<!--webpp-->', cluster.scriptTag());
      }
      const buffer = typeof body === 'string' ? Buffer.from(body) : body;
      reply.header('content-type', file.contentType).header('cache-control', file.cacheControl ?? 'no-store');
      reply.header('etag', `"${path.length}-${buffer.length}"`);
      const range = /^bytes=(\d+)-(\d*)$/.exec(String(request.headers.range ?? ''));
      if (request.headers['if-none-match'] === `"${path.length}-${buffer.length}"`) return reply.code(304).send();
      if (range) {
        const start = Number(range[1]);
        const end = range[2] ? Math.min(Number(range[2]), buffer.length - 1) : buffer.length - 1;
        return reply
          .code(206)
          .header('content-range', `bytes ${start}-${end}/${buffer.length}`)
          .send(buffer.subarray(start, end + 1));
      }
      if (replica.breakBodyAfterBytes !== undefined && buffer.length > replica.breakBodyAfterBytes && request.method === 'GET') {
        return sendBrokenBody(reply, buffer, replica.breakBodyAfterBytes, cluster.bindingsHeader(path, replica));
      }
      return reply.send(buffer);
    },
  });
  return app;
}

/** Headers and the first `sentBytes` of `buffer`, then the connection is destroyed mid-body. */
function sendBrokenBody(reply: FastifyReply, buffer: Buffer, sentBytes: number, bindings: string | undefined): void {
  reply.hijack(); // onSend does not run for a hijacked reply: send its headers here
  const raw = reply.raw;
  raw.writeHead(200, {
    ...(reply.getHeaders() as Record<string, string>),
    'content-length': String(buffer.length),
    'access-control-allow-origin': '*',
    'access-control-expose-headers': '*',
    'timing-allow-origin': '*',
    ...(bindings === undefined ? {} : { [BINDINGS_HEADER]: bindings }),
  });
  raw.write(buffer.subarray(0, sentBytes), () => raw.socket?.destroy());
}

/** A 1×1 PNG, for image resources. */
export const PIXEL_PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=',
  'base64',
);

/**
 * A small site: a page with a stylesheet, a script, `imageCount` images and a fetch() of
 * JSON; a second page; a text file for Range requests. `/whoami.txt` names the replica
 * that served it. `<!--webpp-->` in HTML becomes the cluster's page script tag.
 */
export function demoSite(imageCount = 4): Site {
  const images = Array.from({ length: imageCount }, (_, i) => `/img/${i + 1}.png`);
  const site: Site = {
    '/index.html': {
      contentType: 'text/html; charset=utf-8',
      body: () =>
        `<!doctype html><html><head><meta charset="utf-8"><title>webpp test site</title>` +
        `<link rel="stylesheet" href="/style.css"></head><body><h1 id="title">Gallery</h1>` +
        images.map((src) => `<img src="${src}" alt="" width="1" height="1">`).join('') +
        `<p id="whoami"></p><script src="/app.js"></script><!--webpp--></body></html>`,
    },
    '/page2.html': {
      contentType: 'text/html; charset=utf-8',
      body: () =>
        `<!doctype html><html><head><meta charset="utf-8"><title>page two</title>` +
        `<link rel="stylesheet" href="/style.css"></head><body><h1 id="title">Page two</h1><!--webpp--></body></html>`,
    },
    '/style.css': { contentType: 'text/css; charset=utf-8', body: 'h1 { color: rgb(10, 20, 30); }' },
    '/app.js': {
      contentType: 'text/javascript; charset=utf-8',
      body: `window.appLoaded = true;
fetch('/whoami.txt').then((r) => r.text()).then((t) => { document.getElementById('whoami').textContent = t; });`,
    },
    '/whoami.txt': { contentType: 'text/plain; charset=utf-8', body: (replica) => replica },
    '/data.json': { contentType: 'application/json', body: JSON.stringify({ items: [1, 2, 3] }) },
    '/big.txt': { contentType: 'text/plain; charset=utf-8', body: 'abcdefghijklmnopqrstuvwxyz'.repeat(40) },
  };
  for (const src of images) site[src] = { contentType: 'image/png', body: PIXEL_PNG };
  return site;
}
