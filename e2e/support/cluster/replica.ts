/**
 * One replica of a test cluster: a real @webpp/origin server (Fastify + the webppOrigin
 * plugin + @fastify/static over the replica's own folder, its own data directory) on a
 * loopback port, behind its own @webpp/netem link emulator. The browser reaches it only
 * through the emulator, as http://<name>.localhost:<emulator port>, which is also the
 * server's public URL (so the bindings it sends name its emulator).
 *
 * Faults: delay, bandwidth and stalls through the emulator; `stall()` black-holes the link
 * (a hung server); `kill()` stops the real server and makes the emulator refuse connections
 * (a dead machine), `start()` brings a new server up on the same port with the same data;
 * `faults` (faults.ts) for what a link cannot do. With TLS (HTTP/2), or on request, the
 * link is a TCP delay line instead (tcp-delay-line.ts): delay only, no stalls or outages.
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { createSecureServer } from 'node:http2';
import { createServer as createNetServer, type AddressInfo, type Socket } from 'node:net';
import type { FastifyInstance } from 'fastify';
import type { WebppOriginOptions } from '@webpp/origin';
import { startLinkEmulator, type LinkEmulator, type LinkProfile, type RequestRecord, type Scenario, type Timeline } from '@webpp/netem';
import type { FaultState } from './faults.js';
import { buildOriginApp } from './origin-app.js';
import { OriginProcess, type OriginProcessOptions } from './origin-process.js';
import { RequestLog, type RequestLogEntry } from './request-log.js';
import { startTcpDelayLine, type TcpDelayLine } from './tcp-delay-line.js';

export interface TlsPem {
  cert: string | Buffer;
  key: string | Buffer;
}

/** How a replica's server is built; fixed when the cluster starts. */
export interface ReplicaSetup {
  /** The folder it serves. */
  root: string;
  /** Its data directory (persisted directory, stored replicas): kept across restarts. */
  dataDir: string;
  /** Options of the webpp plugin other than publicUrl, dataDir and contentRoot. */
  origin: Omit<WebppOriginOptions, 'publicUrl' | 'dataDir'>;
  /** Headers @fastify/static adds to a file (the site's own Cache-Control, Content-Type). */
  fileHeaders?: (absolutePath: string) => Record<string, string>;
  /** The site's routes (APIs, redirects), registered after the plugin. */
  routes?: (app: FastifyInstance) => void;
  /** Hooks added after the plugin (a test's own, e.g. a hostile replica's onSend). */
  configure?: (app: FastifyInstance) => void;
  /** Run the server as a `webpp-origin` child process with these options instead (port and public URL are the replica's). */
  process?: Omit<OriginProcessOptions, 'name' | 'port' | 'publicUrl'>;
}

export interface ReplicaLink {
  /** The cluster's scenario clock, shared by its emulators. */
  timeline: Timeline;
  /** Emulate this netem scenario's server of this name. */
  scenario?: { scenario: Scenario; server: string };
  /** Without a scenario: this link profile, else a fixed round-trip delay. */
  profile?: LinkProfile;
  delayMs?: number;
  /** Seed of the emulator's random stream. */
  seed?: string | number;
  /** The server is a child process (setup.process): only a port is reserved at bind(). */
  childProcess?: boolean;
  /** HTTPS + HTTP/2: through a TCP delay line (the netem emulator speaks HTTP/1.1 only). */
  tls?: TlsPem;
  /** Plain HTTP through a TCP delay line too (round trips per packet and per handshake, not per request). */
  tcp?: boolean;
  /** The emulator forwards each client connection from its own loopback address (netem's distinctClientAddresses). */
  distinctClientAddresses?: boolean;
}

export class ClusterReplica {
  readonly name: string;
  readonly host: string;
  private readonly requestLog = new RequestLog();
  /** Every request the server received, oldest first. */
  readonly log: RequestLogEntry[] = this.requestLog.entries;
  readonly faults: FaultState = { forcedStatus: undefined, breakBodyAfterBytes: undefined, rewriteHeaders: undefined };
  /**
   * Every request the link carried or turned away, as its emulator recorded it when it was
   * over (served, reset, refused, hung, aborted by the client): what was asked of this
   * replica, including requests a long delay kept from reaching the server.
   */
  readonly linkLog: RequestRecord[] = [];
  /** The emulator in front of the server (absent with TLS or a TCP link). */
  emulator: LinkEmulator | undefined;
  /** The TCP delay line in front of the server (with TLS or a TCP link). */
  tcpLine: TcpDelayLine | undefined;
  /** The running Fastify app (undefined while killed, and with a child process). */
  app: FastifyInstance | undefined;
  /** The `webpp-origin` child process, when the cluster runs servers as processes. */
  process: OriginProcess | undefined;
  port = 0;
  private upstreamPort = 0;
  private server: Server | undefined;
  private readonly sockets = new Set<Socket>();
  private setup: ReplicaSetup | undefined;
  private directDelayMs = 0;
  private killSwitchOn = false;

  constructor(
    name: string,
    private readonly link: ReplicaLink,
  ) {
    this.name = name;
    this.host = `${name.toLowerCase()}.localhost`;
    this.directDelayMs = link.delayMs ?? 0;
  }

  get origin(): string {
    return `${this.link.tls ? 'https' : 'http'}://${this.host}:${this.port}`;
  }

  get running(): boolean {
    return this.app !== undefined || this.process?.running === true;
  }

  url(path: string): string {
    return `${this.origin}${path}`;
  }

  /** Requests received for a path (optionally one method), e.g. requests('/img/1.png', 'HEAD'). */
  requests(path?: string, method?: string): RequestLogEntry[] {
    return this.requestLog.filter(path, method);
  }

  clearLog(): void {
    this.requestLog.clear();
    this.linkLog.length = 0;
  }

  /** Answer every request (but the client scripts) with this status, before the plugin (faults.ts). */
  get forcedStatus(): number | undefined {
    return this.faults.forcedStatus;
  }

  set forcedStatus(status: number | undefined) {
    this.faults.forcedStatus = status;
  }

  /** Destroy the connection after this many body bytes of a larger GET (faults.ts). */
  get breakBodyAfterBytes(): number | undefined {
    return this.faults.breakBodyAfterBytes;
  }

  set breakBodyAfterBytes(bytes: number | undefined) {
    this.faults.breakBodyAfterBytes = bytes;
  }

  /** The round trip the link adds (a fixed value set here overrides a scenario's). */
  get delayMs(): number {
    if (!this.emulator) return this.directDelayMs;
    const delay = this.emulator.currentLink().delayMs;
    return typeof delay === 'number' ? delay : Number.NaN;
  }

  set delayMs(value: number) {
    this.directDelayMs = value;
    this.emulator?.setDelay(value);
    if (this.tcpLine) this.tcpLine.rttMs = value;
  }

  /** The origin's kill switch (`webpp-control: off` on every response); kept across restarts. */
  set killSwitch(on: boolean) {
    this.killSwitchOn = on;
    if (this.app) this.app.webpp.killSwitch = on;
  }

  /** A hung server: connections are accepted, nothing is answered until release(). */
  stall(): void {
    this.emulatorOrThrow('stall').setOutage('hang');
  }

  release(): void {
    this.emulatorOrThrow('release').setOutage(null);
  }

  /** Binds the server's socket (or reserves a port for a child process) and starts the emulator: the public URL is then known. */
  async bind(): Promise<void> {
    if (this.link.childProcess) {
      this.upstreamPort = await reservePort();
    } else {
      this.server = await this.listen(0);
      this.upstreamPort = (this.server.address() as AddressInfo).port;
    }
    if (this.link.tls || this.link.tcp) {
      this.tcpLine = await startTcpDelayLine(this.directDelayMs);
      this.tcpLine.setUpstream(this.upstreamPort);
      this.port = this.tcpLine.port;
      return;
    }
    const { timeline, seed, scenario } = this.link;
    const common = {
      upstream: `http://127.0.0.1:${this.upstreamPort}`,
      timeline,
      ...(seed === undefined ? {} : { seed }),
      ...(this.link.distinctClientAddresses === true ? { distinctClientAddresses: true } : {}),
    };
    this.emulator = scenario
      ? await startLinkEmulator({ ...common, ...scenario })
      : await startLinkEmulator({ ...common, profile: this.link.profile ?? { delayMs: this.directDelayMs }, server: this.name });
    this.emulator.events.on('request', (record) => this.linkLog.push(record));
    this.port = this.emulator.port;
  }

  /** Builds the real server on the bound socket (first start) or a new one on the same port (restart). */
  async start(setup?: ReplicaSetup): Promise<void> {
    if (this.app) return;
    if (setup) this.setup = setup;
    if (!this.setup) throw new Error(`replica ${this.name}: start() before its setup`);
    if (this.setup.process) {
      this.process ??= new OriginProcess({ ...this.setup.process, name: this.name, port: this.upstreamPort, publicUrl: this.origin });
      await this.process.start();
      if (this.emulator && this.emulator.currentOutage() === 'refuse') this.emulator.setOutage(null);
      await this.tcpLine?.accept();
      return;
    }
    this.server ??= await this.listen(this.upstreamPort);
    this.app = await this.buildApp(this.server, this.setup);
    if (this.emulator && this.emulator.currentOutage() === 'refuse') this.emulator.setOutage(null);
    await this.tcpLine?.accept();
  }

  /** A crashed machine: the server stops at once (open connections dropped), its port refuses. */
  async kill(): Promise<void> {
    const app = this.app;
    const server = this.server;
    this.app = undefined;
    this.server = undefined;
    this.emulator?.setOutage('refuse');
    await this.tcpLine?.refuse();
    await this.process?.kill9();
    for (const socket of this.sockets) socket.destroy();
    await app?.close().catch(() => undefined);
    if (server?.listening) await new Promise<void>((done) => server.close(() => done()));
  }

  /** Stops the server and the emulator. */
  async stop(): Promise<void> {
    await this.process?.stop().catch(() => undefined); // SIGTERM first: a polite end
    await this.kill();
    this.process?.closeLog();
    await this.emulator?.close();
    await this.tcpLine?.close();
  }

  private emulatorOrThrow(what: string): LinkEmulator {
    if (!this.emulator) throw new Error(`replica ${this.name}: ${what}() needs the link emulator (not with TLS or a TCP link)`);
    return this.emulator;
  }

  private async listen(port: number): Promise<Server> {
    const tls = this.link.tls;
    // An Http2SecureServer is not an http.Server, but it is what Fastify's http2 mode runs on.
    const server = tls ? (createSecureServer({ ...tls, allowHTTP1: true }) as unknown as Server) : createServer();
    server.on('connection', (socket: Socket) => {
      this.sockets.add(socket);
      socket.once('close', () => this.sockets.delete(socket));
    });
    server.prependListener('request', (request: IncomingMessage) => this.requestLog.record(request));
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => resolve());
    });
    return server;
  }

  private async buildApp(server: Server, setup: ReplicaSetup): Promise<FastifyInstance> {
    const app = await buildOriginApp(server, setup, this.faults, this.origin, this.link.tls !== undefined);
    app.webpp.killSwitch = this.killSwitchOn;
    return app;
  }
}

/** A free loopback port, for a server process that must keep its port across restarts. */
export async function reservePort(): Promise<number> {
  const server = createNetServer();
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}
