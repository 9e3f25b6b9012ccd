/**
 * One replica server of the demo: the site's Fastify app (with the webpp origin plugin) on an
 * internal loopback port, behind a @webpp/netem link emulator on the public port that the
 * browser talks to as http://<id>.localhost:<port>. It can be stopped (the app closes and
 * the public port refuses connections), restarted, slowed down and restored.
 */
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { startLinkEmulator, type LinkEmulator, type Timeline } from '@webpp/netem';
import type { ReplicaView } from '../dashboard/model.js';
import { describeLink, slowedDelay, type ReplicaLinkSpec } from './link-profiles.js';

/** Builds the replica's Fastify app; called on start and on every restart. */
export type ReplicaAppFactory = (replica: DemoReplica) => Promise<FastifyInstance>;

export interface DemoReplicaOptions {
  spec: ReplicaLinkSpec;
  /** Public port (the emulator's); 0 picks an ephemeral one. */
  publicPort: number;
  /** Shared clock of every emulator of the demo. */
  timeline: Timeline;
}

export class DemoReplica {
  readonly id: string;
  readonly spec: ReplicaLinkSpec;
  private readonly internalServer: http.Server;
  private internalPort = 0;
  private emulator: LinkEmulator | undefined;
  private app: FastifyInstance | undefined;
  private appFactory: ReplicaAppFactory | undefined;
  private slowedDown = false;
  private readonly requestCounts = { get: 0, head: 0, other: 0 };
  /** Serialises start/stop/restart, so two clicks cannot interleave. */
  private transition: Promise<unknown> = Promise.resolve();

  private constructor(spec: ReplicaLinkSpec) {
    this.id = spec.id;
    this.spec = spec;
    this.internalServer = http.createServer((request, response) => this.handle(request, response));
    this.internalServer.keepAliveTimeout = 5_000;
  }

  /** Binds the internal and public ports; the app comes with `start(factory)`. */
  static async listen(options: DemoReplicaOptions): Promise<DemoReplica> {
    const replica = new DemoReplica(options.spec);
    await replica.listenInternal(0);
    try {
      replica.emulator = await startLinkEmulator({
        upstream: `http://127.0.0.1:${replica.internalPort}`,
        profile: options.spec.link,
        server: options.spec.id,
        seed: `demo-${options.spec.id}`,
        timeline: options.timeline,
        host: '127.0.0.1',
        port: options.publicPort,
      });
    } catch (error) {
      replica.internalServer.close();
      throw error;
    }
    replica.emulator.events.on('request', (record) => {
      if (record.outcome !== 'ok') return;
      if (record.method === 'GET') replica.requestCounts.get += 1;
      else if (record.method === 'HEAD') replica.requestCounts.head += 1;
      else replica.requestCounts.other += 1;
    });
    return replica;
  }

  /** The origin the browser uses, e.g. "http://a.localhost:8081". */
  get publicOrigin(): string {
    return `http://${this.id}.localhost:${this.publicPort}`;
  }

  get publicPort(): number {
    return this.emulator?.port ?? 0;
  }

  /** Where the emulator forwards to: the app itself, without emulated distance. */
  get internalOrigin(): string {
    return `http://127.0.0.1:${this.internalPort}`;
  }

  get running(): boolean {
    return this.app !== undefined;
  }

  /** Starts the app (first start, or restart after stop). */
  start(factory?: ReplicaAppFactory): Promise<void> {
    if (factory) this.appFactory = factory;
    return this.serialise(async () => {
      if (this.app) return;
      const create = this.appFactory;
      if (!create) throw new Error(`replica ${this.id}: no app factory`);
      if (!this.internalServer.listening) await this.listenInternal(this.internalPort);
      const app = await create(this);
      await app.ready();
      this.app = app;
      this.emulator?.setOutage(null);
    });
  }

  /** Stops the app: the public port refuses connections, in-flight requests are reset. */
  stop(): Promise<void> {
    return this.serialise(async () => {
      if (!this.app) return;
      this.emulator?.setOutage('refuse');
      const app = this.app;
      this.app = undefined;
      await app.close();
      await this.closeInternal();
    });
  }

  /** "Slow down": adds SLOW_DOWN_EXTRA_DELAY_MS to the link's delay until restored. */
  setSlowed(slowed: boolean): void {
    if (!this.emulator) return;
    this.emulator.setDelay(slowed ? slowedDelay(this.spec.link.delayMs) : this.spec.link.delayMs);
    this.slowedDown = slowed;
  }

  view(): ReplicaView {
    return {
      id: this.id,
      server: this.publicOrigin,
      title: this.spec.title,
      linkDescription: describeLink(this.emulator?.currentLink() ?? this.spec.link),
      running: this.running,
      slowed: this.slowedDown,
      requestCounts: { ...this.requestCounts },
    };
  }

  /** Stops everything, ports included. */
  async close(): Promise<void> {
    await this.stop().catch(() => undefined);
    await this.emulator?.close();
    await this.closeInternal();
  }

  private handle(request: IncomingMessage, response: ServerResponse): void {
    const app = this.app;
    if (app) {
      app.routing(request, response);
      return;
    }
    response.statusCode = 503;
    response.setHeader('retry-after', '1');
    response.end('replica stopped');
  }

  private async listenInternal(port: number): Promise<void> {
    await new Promise<void>((resolve, reject) => {
      const onError = (error: Error): void => reject(error);
      this.internalServer.once('error', onError);
      this.internalServer.listen({ host: '127.0.0.1', port }, () => {
        this.internalServer.off('error', onError);
        resolve();
      });
    });
    this.internalPort = (this.internalServer.address() as AddressInfo).port;
  }

  private async closeInternal(): Promise<void> {
    if (!this.internalServer.listening) return;
    const closed = new Promise<void>((resolve) => this.internalServer.close(() => resolve()));
    this.internalServer.closeAllConnections();
    await closed;
  }

  private serialise<T>(work: () => Promise<T>): Promise<T> {
    const next = this.transition.then(work, work);
    this.transition = next.catch(() => undefined);
    return next;
  }
}
