/**
 * The link emulator: an HTTP-aware proxy on its own loopback port in front of one replica
 * server. Per request (keep-alive or not) it draws a plan from the link in force — round
 * trip delay, stall, bandwidth — and carries it out: half the delay before forwarding the
 * request, half after the upstream's response head, then the body paced at the bandwidth.
 * Outages reset, refuse or black-hole connections (see OUTAGE_MODES).
 */
import { EventEmitter } from 'node:events';
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import net, { type Socket } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { performance } from 'node:perf_hooks';
import type { DurationSpec } from './model/distributions.js';
import { NetemError } from './model/errors.js';
import { createRandom, type RandomSource, type SeedPart } from './model/random.js';
import { planRequest, type RequestPlan } from './model/request-plan.js';
import { SharedPace } from './pacing.js';
import { applyLinkChange, ServerTimeline } from './model/schedule.js';
import {
  OUTAGE_MODES,
  parseScenario,
  validateLink,
  type LinkProfile,
  type OutageMode,
  type StallSpec,
} from './model/scenario.js';
import { forwardRequestHeaders, forwardResponseHeaders } from './http-headers.js';
import { assertLoopbackHost, parseUpstream } from './loopback.js';
import { paceBody, waitUntil } from './pacing.js';
import { Timeline } from './timeline.js';

export interface LinkEmulatorOptions {
  /** The replica server behind the emulator, e.g. "http://127.0.0.1:8081". Loopback only. */
  upstream: string | URL;
  /** A fixed link (no schedule, no outages). Give this or `scenario`. */
  profile?: LinkProfile;
  /** A scenario (parsed, or raw JSON to validate) and the server of it to emulate. */
  scenario?: unknown;
  /** Which server of the scenario; may be left out when the scenario has only one. */
  server?: string;
  /** Seed of this emulator's random stream; default the scenario's seed, else 0. */
  seed?: SeedPart;
  /** Shared scenario clock; default a new one starting now. */
  timeline?: Timeline;
  /** Listening host, loopback only. Default "127.0.0.1". */
  host?: string;
  /** Listening port. Default 0 (ephemeral). */
  port?: number;
  /** Keep the client's Host header (e.g. "a.localhost:PORT") when forwarding. Default true. */
  preserveHost?: boolean;
  /** Idle keep-alive connections close after this long. Default 5000. */
  keepAliveTimeoutMs?: number;
  /**
   * Forward each client connection from a loopback address of its own (127.0.x.y, one /16),
   * so that the upstream sees every browser connection as another host of one network — for
   * tests of per-client rules (the client aggregate's distinct reporters) behind one link.
   * Default false: every request comes from 127.0.0.1.
   */
  distinctClientAddresses?: boolean;
}

export type RequestOutcome = 'ok' | 'reset' | 'refused' | 'hung' | 'upstream-error' | 'client-aborted';

/** What happened to one request; emitted as the "request" event when it is over. */
export interface RequestRecord {
  /** Arrival order on this emulator, from 0. */
  index: number;
  server: string;
  method: string;
  url: string;
  /** The request's Range header, when it had one (a client resuming a body sends one). */
  range?: string;
  /** Scenario time of arrival. */
  arrivedAtMs: number;
  /** The drawn plan; null when an outage turned the request away before any draw. */
  plan: RequestPlan | null;
  outcome: RequestOutcome;
  status?: number;
  bodyBytes: number;
  /** Measured from arrival to the response head leaving the emulator. */
  firstByteMs?: number;
  /** Measured from arrival to the last body byte leaving the emulator. */
  completeMs?: number;
}

export interface OutageEvent {
  server: string;
  atMs: number;
  previous: OutageMode | null;
  current: OutageMode | null;
}

export interface LinkEmulatorStats {
  requests: number;
  served: number;
  reset: number;
  hung: number;
  upstreamErrors: number;
  clientAborts: number;
  bodyBytes: number;
}

export interface LinkEmulatorEvents {
  request: [RequestRecord];
  outage: [OutageEvent];
  /** The listener could not be bound again after a "refuse" outage. */
  'relisten-failed': [Error];
}

/** A runtime change: link parameters and/or an outage (null = force up). */
export interface LinkUpdate extends Partial<LinkProfile> {
  outage?: OutageMode | null;
}

export interface LinkEmulator {
  /** The emulated server's name (scenario key, or "link" for a fixed profile). */
  readonly server: string;
  readonly host: string;
  readonly port: number;
  /** "http://127.0.0.1:PORT": where clients connect instead of the upstream. */
  readonly url: string;
  readonly upstream: URL;
  readonly timeline: Timeline;
  readonly events: EventEmitter<LinkEmulatorEvents>;
  /** The link now: the schedule's, with runtime overrides on top. */
  currentLink(): LinkProfile;
  /** The outage now, or null. */
  currentOutage(): OutageMode | null;
  /** Runtime control: override link parameters and/or the outage state until cleared. */
  update(change: LinkUpdate): void;
  setDelay(delayMs: DurationSpec): void;
  setBandwidth(bytesPerSec: number | null): void;
  setStall(stall: StallSpec | null): void;
  /** Force an outage ("reset" | "refuse" | "hang"), or force the link up with null (up: no outage, and no brownout sheds a request). */
  setOutage(mode: OutageMode | null): void;
  /** Drop every runtime override: back to the scenario's schedule. */
  clearOverrides(): void;
  stats(): LinkEmulatorStats;
  /** Stops listening and destroys every connection. */
  close(): Promise<void>;
}

function optionsError(message: string): NetemError {
  return new NetemError('WEBPP_ERR_NETEM_OPTIONS', message);
}

function resolveServerTimeline(options: LinkEmulatorOptions): { timeline: ServerTimeline; seed: SeedPart } {
  if ((options.profile === undefined) === (options.scenario === undefined)) {
    throw optionsError('give exactly one of `profile` and `scenario`');
  }
  if (options.profile !== undefined) {
    const link = validateOrThrow(() => validateLink(options.profile, 'profile', false));
    return { timeline: new ServerTimeline(options.server ?? 'link', { link }), seed: options.seed ?? 0 };
  }
  const scenario = parseScenario(options.scenario);
  const names = Object.keys(scenario.servers);
  const name = options.server ?? (names.length === 1 ? names[0] : undefined);
  if (name === undefined) throw optionsError(`scenario "${scenario.name}" has several servers; pick one with \`server\` (${names.join(', ')})`);
  const server = scenario.servers[name];
  if (!server) throw optionsError(`scenario "${scenario.name}" has no server "${name}" (${names.join(', ')})`);
  return { timeline: new ServerTimeline(name, server), seed: options.seed ?? scenario.seed ?? 0 };
}

/** Re-labels validation errors of runtime input as option errors. */
function validateOrThrow<T>(validate: () => T): T {
  try {
    return validate();
  } catch (error) {
    if (error instanceof NetemError) throw optionsError(error.message);
    throw error;
  }
}

async function listen(server: net.Server, host: string, port: number): Promise<void> {
  await new Promise<void>((resolve, reject) => {
    const onError = (error: Error): void => reject(error);
    server.once('error', onError);
    server.listen({ host, port, exclusive: true }, () => {
      server.off('error', onError);
      resolve();
    });
  });
}

/** Starts an emulator. Resolves once it listens. */
export async function startLinkEmulator(options: LinkEmulatorOptions): Promise<LinkEmulator> {
  const upstream = parseUpstream(options.upstream);
  const host = options.host ?? '127.0.0.1';
  assertLoopbackHost(host);
  const requestedPort = options.port ?? 0;
  if (!Number.isInteger(requestedPort) || requestedPort < 0 || requestedPort > 65535) throw optionsError(`invalid port ${requestedPort}`);
  const { timeline: schedule, seed } = resolveServerTimeline(options);
  const emulator = new HttpLinkEmulator({
    upstream,
    host,
    schedule,
    random: createRandom(seed, schedule.name),
    brownoutRandom: createRandom(seed, schedule.name, 'brownout'),
    timeline: options.timeline ?? new Timeline(),
    preserveHost: options.preserveHost ?? true,
    keepAliveTimeoutMs: options.keepAliveTimeoutMs ?? 5000,
    distinctClientAddresses: options.distinctClientAddresses ?? false,
  });
  await emulator.start(requestedPort);
  return emulator;
}

interface EmulatorParts {
  upstream: URL;
  host: string;
  schedule: ServerTimeline;
  random: RandomSource;
  /** Its own stream, so that brownouts leave the request plans' draws alone. */
  brownoutRandom: RandomSource;
  timeline: Timeline;
  preserveHost: boolean;
  keepAliveTimeoutMs: number;
  distinctClientAddresses: boolean;
}

class HttpLinkEmulator implements LinkEmulator {
  readonly server: string;
  readonly host: string;
  readonly upstream: URL;
  readonly timeline: Timeline;
  readonly events = new EventEmitter<LinkEmulatorEvents>();
  port = 0;

  private readonly schedule: ServerTimeline;
  private readonly random: RandomSource;
  private readonly brownoutRandom: RandomSource;
  /** With `linkSharing: "shared"`: the one link every response's body crosses (pacing.ts). */
  private readonly sharedLink: SharedPace | undefined;
  private readonly preserveHost: boolean;
  /** With distinctClientAddresses: the source address each client connection is forwarded from. */
  private readonly clientAddresses: WeakMap<Socket, string> | undefined;
  private clientCount = 0;
  private readonly agent = new http.Agent({ keepAlive: true, maxSockets: 256 });
  private readonly httpServer: http.Server;
  private listener: net.Server | undefined;
  private readonly sockets = new Set<Socket>();
  private readonly hungSockets = new Set<Socket>();
  /** Sockets reset by an outage, to tell that apart from a client hanging up. */
  private readonly outageResetSockets = new WeakSet<Socket>();
  private readonly upgradeUpstreams = new Set<Socket>();
  private linkOverride: Partial<LinkProfile> = {};
  /** undefined: follow the schedule; null: forced up; a mode: forced down. */
  private outageOverride: OutageMode | null | undefined;
  private outageState: OutageMode | null = null;
  private boundaryTimers: NodeJS.Timeout[] = [];
  private unsubscribeRestart: () => void = () => {};
  private closed = false;
  private requestCount = 0;
  private readonly counters: LinkEmulatorStats = { requests: 0, served: 0, reset: 0, hung: 0, upstreamErrors: 0, clientAborts: 0, bodyBytes: 0 };

  constructor(parts: EmulatorParts) {
    this.server = parts.schedule.name;
    this.host = parts.host;
    this.upstream = parts.upstream;
    this.schedule = parts.schedule;
    this.random = parts.random;
    this.brownoutRandom = parts.brownoutRandom;
    this.sharedLink = parts.schedule.linkSharing === 'shared' ? new SharedPace() : undefined;
    this.timeline = parts.timeline;
    this.preserveHost = parts.preserveHost;
    this.clientAddresses = parts.distinctClientAddresses ? new WeakMap() : undefined;
    this.httpServer = http.createServer((req, res) => this.onRequest(req, res));
    this.httpServer.keepAliveTimeout = parts.keepAliveTimeoutMs;
    this.httpServer.on('upgrade', (req: IncomingMessage, socket: Socket, head: Buffer) => this.onUpgrade(req, socket, head));
    this.httpServer.on('clientError', (_error, socket) => socket.destroy());
  }

  get url(): string {
    return `http://${this.host.includes(':') ? `[${this.host}]` : this.host}:${this.port}`;
  }

  async start(port: number): Promise<void> {
    this.listener = this.createListener();
    try {
      await listen(this.listener, this.host, port);
    } catch (error) {
      throw new NetemError('WEBPP_ERR_NETEM_LISTEN', `cannot listen on ${this.host}:${port}: ${(error as Error).message}`, { cause: error });
    }
    this.port = (this.listener.address() as net.AddressInfo).port;
    this.unsubscribeRestart = this.timeline.onRestart(() => this.scheduleBoundaries());
    this.scheduleBoundaries();
  }

  // ---- runtime control ---------------------------------------------------------------

  currentLink(): LinkProfile {
    return applyLinkChange(this.schedule.linkAt(this.timeline.nowMs()), this.linkOverride);
  }

  currentOutage(): OutageMode | null {
    this.refreshOutage();
    return this.outageState;
  }

  update(change: LinkUpdate): void {
    const { outage, ...link } = change;
    const valid = validateOrThrow(() => validateLink(link, 'update', true));
    if (outage !== undefined && outage !== null && !OUTAGE_MODES.includes(outage)) {
      throw optionsError(`update.outage must be one of ${OUTAGE_MODES.join(', ')} or null`);
    }
    this.linkOverride = { ...this.linkOverride, ...valid };
    if (outage !== undefined) {
      this.outageOverride = outage;
      this.refreshOutage();
    }
  }

  setDelay(delayMs: DurationSpec): void {
    this.update({ delayMs });
  }

  setBandwidth(bytesPerSec: number | null): void {
    this.update({ bandwidthBytesPerSec: bytesPerSec });
  }

  setStall(stall: StallSpec | null): void {
    this.update({ stall });
  }

  setOutage(mode: OutageMode | null): void {
    this.update({ outage: mode });
  }

  clearOverrides(): void {
    this.linkOverride = {};
    this.outageOverride = undefined;
    this.refreshOutage();
  }

  stats(): LinkEmulatorStats {
    return { ...this.counters };
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.unsubscribeRestart();
    for (const timer of this.boundaryTimers) clearTimeout(timer);
    this.boundaryTimers = [];
    for (const socket of this.sockets) socket.destroy();
    for (const socket of this.upgradeUpstreams) socket.destroy();
    this.agent.destroy();
    const listener = this.listener;
    this.listener = undefined;
    if (listener?.listening) await new Promise<void>((resolve) => listener.close(() => resolve()));
  }

  // ---- outages -----------------------------------------------------------------------

  private scheduledOutage(): OutageMode | null {
    const window = this.schedule.outageAt(this.timeline.nowMs());
    return window ? (window.mode ?? 'reset') : null;
  }

  /** Sets timers at every future outage boundary of the current timeline. */
  private scheduleBoundaries(): void {
    for (const timer of this.boundaryTimers) clearTimeout(timer);
    this.boundaryTimers = [];
    const nowMs = this.timeline.nowMs();
    for (const boundaryMs of this.schedule.outageBoundariesMs()) {
      if (boundaryMs < nowMs) continue;
      this.boundaryTimers.push(this.boundaryTimer(boundaryMs));
    }
    this.refreshOutage();
  }

  /** Timers and performance.now() may disagree by a millisecond: re-arm until really due. */
  private boundaryTimer(boundaryMs: number): NodeJS.Timeout {
    const timer = setTimeout(() => {
      this.boundaryTimers = this.boundaryTimers.filter((t) => t !== timer);
      if (this.timeline.nowMs() < boundaryMs) this.boundaryTimers.push(this.boundaryTimer(boundaryMs));
      else this.refreshOutage();
    }, Math.max(0, boundaryMs - this.timeline.nowMs()) + 1);
    timer.unref();
    return timer;
  }

  private refreshOutage(): void {
    if (this.closed) return;
    const next = this.outageOverride !== undefined ? this.outageOverride : this.scheduledOutage();
    const previous = this.outageState;
    if (next === previous) return;
    this.outageState = next;
    if (previous === 'hang') {
      // Black-holed connections are reset when the server comes back.
      for (const socket of this.hungSockets) this.resetByOutage(socket);
      this.hungSockets.clear();
    }
    if (previous === 'refuse') this.reopenListener();
    if (next === 'reset' || next === 'refuse') {
      for (const socket of this.sockets) this.resetByOutage(socket);
      for (const socket of this.upgradeUpstreams) socket.destroy();
      if (next === 'refuse') this.closeListener();
    } else if (next === 'hang') {
      for (const socket of this.sockets) this.hungSockets.add(socket);
    }
    this.events.emit('outage', { server: this.server, atMs: this.timeline.nowMs(), previous, current: next });
  }

  private resetByOutage(socket: Socket): void {
    this.outageResetSockets.add(socket);
    socket.resetAndDestroy();
  }

  private createListener(): net.Server {
    const listener = net.createServer((socket) => this.onConnection(socket));
    listener.on('error', () => {});
    return listener;
  }

  private closeListener(): void {
    const listener = this.listener;
    this.listener = undefined;
    listener?.close();
  }

  /** Binds the same port again after a "refuse" outage, retrying for up to 5 s. */
  private reopenListener(): void {
    const deadlineMs = performance.now() + 5000;
    const attempt = async (): Promise<void> => {
      while (!this.closed && !this.refusing()) {
        const listener = this.createListener();
        try {
          await listen(listener, this.host, this.port);
          if (this.closed || this.refusing()) listener.close();
          else this.listener = listener;
          return;
        } catch (error) {
          if (performance.now() > deadlineMs) {
            this.events.emit('relisten-failed', error as Error);
            return;
          }
          await sleep(50);
        }
      }
    };
    void attempt();
  }

  private refusing(): boolean {
    return this.outageState === 'refuse';
  }

  private onConnection(socket: Socket): void {
    this.refreshOutage();
    if (this.outageState === 'reset' || this.outageState === 'refuse' || this.closed) {
      socket.resetAndDestroy();
      return;
    }
    this.sockets.add(socket);
    socket.on('close', () => {
      this.sockets.delete(socket);
      this.hungSockets.delete(socket);
    });
    socket.on('error', () => {});
    // Like http.Server's default (noDelay): without it, Nagle's algorithm holds the body
    // behind the flushed head until the client's delayed ACK (~40 ms), an unmodelled delay.
    socket.setNoDelay(true);
    if (this.outageState === 'hang') this.hungSockets.add(socket);
    this.httpServer.emit('connection', socket);
  }

  // ---- requests ----------------------------------------------------------------------

  private static readonly COUNTER_OF: Record<RequestOutcome, keyof LinkEmulatorStats> = {
    ok: 'served',
    reset: 'reset',
    refused: 'reset',
    hung: 'hung',
    'upstream-error': 'upstreamErrors',
    'client-aborted': 'clientAborts',
  };

  private record(base: Omit<RequestRecord, 'server'>): void {
    this.counters[HttpLinkEmulator.COUNTER_OF[base.outcome]]++;
    this.events.emit('request', { server: this.server, ...base });
  }

  /** Decides whether an arriving request is turned away by an outage. */
  private turnedAway(socket: Socket): 'reset' | 'hung' | undefined {
    this.refreshOutage();
    if (this.outageState === 'hang' || this.hungSockets.has(socket)) {
      this.hungSockets.add(socket);
      return 'hung';
    }
    if (this.outageState !== null) {
      socket.resetAndDestroy();
      return 'reset';
    }
    return undefined;
  }

  private onRequest(req: IncomingMessage, res: ServerResponse): void {
    const arrivedAtMs = this.timeline.nowMs();
    const startedMs = performance.now();
    const index = this.requestCount++;
    this.counters.requests++;
    const base = { index, method: req.method ?? 'GET', url: req.url ?? '/', arrivedAtMs, ...(req.headers.range === undefined ? {} : { range: req.headers.range }) };
    const refusal = this.turnedAway(req.socket);
    if (refusal) {
      this.record({ ...base, plan: null, outcome: refusal, bodyBytes: 0 });
      return;
    }
    const plan = planRequest(this.currentLink(), this.random);
    void this.exchange(req, res, plan, startedMs).then((result) => this.record({ ...base, plan, ...result }));
  }

  private alive(socket: Socket, signal: AbortSignal): boolean {
    return !socket.destroyed && !this.hungSockets.has(socket) && !signal.aborted && !this.closed;
  }

  private async exchange(
    req: IncomingMessage,
    res: ServerResponse,
    plan: RequestPlan,
    startedMs: number,
  ): Promise<Pick<RequestRecord, 'outcome' | 'status' | 'bodyBytes' | 'firstByteMs' | 'completeMs'>> {
    const socket = req.socket;
    const controller = new AbortController();
    const { signal } = controller;
    res.on('close', () => {
      if (!res.writableFinished) controller.abort(new Error('client closed the connection'));
    });
    let headSent = false;
    let bodyBytes = 0;
    const frozen = (): Pick<RequestRecord, 'outcome' | 'bodyBytes'> => ({
      outcome: this.hungSockets.has(socket) ? 'hung' : this.outageResetSockets.has(socket) || !signal.aborted ? 'reset' : 'client-aborted',
      bodyBytes,
    });
    try {
      // The request travels to the server: half the round trip.
      await waitUntil(startedMs + plan.delayMs / 2, signal);
      if (!this.alive(socket, signal)) return frozen();
      // A link forced up (setOutage(null)) sheds nothing either.
      const brownout = this.outageOverride === null ? undefined : this.schedule.brownoutAt(this.timeline.nowMs());
      if (brownout && this.brownoutRandom() < brownout.errorProbability) {
        // Shed at once: a quick 5xx after the way back, without asking the upstream.
        await waitUntil(performance.now() + plan.delayMs / 2, signal);
        if (!this.alive(socket, signal)) return frozen();
        const status = brownout.status ?? 503;
        res.writeHead(status, { 'content-length': '0', 'cache-control': 'no-store' });
        await new Promise<void>((resolve) => res.end(resolve));
        const elapsedMs = performance.now() - startedMs;
        return { outcome: 'ok', status, bodyBytes: 0, firstByteMs: elapsedMs, completeMs: elapsedMs };
      }
      const upstreamRes = await this.forward(req, signal);
      // The first byte travels back: the other half, plus a first-byte stall.
      await waitUntil(performance.now() + plan.delayMs / 2 + (plan.stallPhase === 'first-byte' ? plan.stallMs : 0), signal);
      if (!this.alive(socket, signal)) {
        upstreamRes.destroy();
        return frozen();
      }
      const status = upstreamRes.statusCode ?? 502;
      res.writeHead(status, upstreamRes.statusMessage, forwardResponseHeaders(upstreamRes.rawHeaders));
      res.flushHeaders();
      headSent = true;
      const firstByteMs = performance.now() - startedMs;
      const declaredLength = Number(upstreamRes.headers['content-length']);
      const stallAtByte = Number.isFinite(declaredLength) ? Math.floor(plan.stallAfterFraction * declaredLength) : 0;
      bodyBytes = await paceBody(upstreamRes, res, {
        bandwidthBytesPerSec: plan.bandwidthBytesPerSec,
        stallMs: plan.stallPhase === 'body' ? plan.stallMs : 0,
        stallAtByte,
        ...(this.sharedLink ? { sharedLink: this.sharedLink } : {}),
        shouldContinue: () => this.alive(socket, signal),
        signal,
      });
      this.counters.bodyBytes += bodyBytes;
      if (!this.alive(socket, signal)) {
        upstreamRes.destroy();
        return { ...frozen(), status, firstByteMs };
      }
      await new Promise<void>((resolve) => res.end(resolve));
      return { outcome: 'ok', status, bodyBytes, firstByteMs, completeMs: performance.now() - startedMs };
    } catch {
      if (this.outageResetSockets.has(socket) || this.hungSockets.has(socket)) return frozen();
      if (signal.aborted) {
        return { outcome: 'client-aborted', bodyBytes };
      }
      if (!this.alive(socket, signal)) return frozen();
      // An unreachable or failing upstream looks, to the client, like a dead server.
      if (headSent) socket.destroy();
      else socket.resetAndDestroy();
      return { outcome: 'upstream-error', bodyBytes };
    }
  }

  /** The address to forward a client connection's requests from (distinctClientAddresses), else nothing. */
  private sourceAddressOf(socket: Socket): { localAddress?: string } {
    if (this.clientAddresses === undefined) return {};
    let address = this.clientAddresses.get(socket);
    if (address === undefined) {
      const n = this.clientCount++ % (250 * 250);
      address = `127.0.${1 + Math.floor(n / 250)}.${1 + (n % 250)}`;
      this.clientAddresses.set(socket, address);
    }
    return { localAddress: address };
  }

  /**
   * Sends the request upstream and resolves with the response head. A bodiless request
   * that fails on a reused keep-alive connection (the upstream closed it just as it was
   * reused: a known race of pooled HTTP/1.1 connections) is retried once on a new one.
   */
  private forward(req: IncomingMessage, signal: AbortSignal, retried = false): Promise<IncomingMessage> {
    return new Promise<IncomingMessage>((resolve, reject) => {
      const upstreamReq = http.request({
        host: this.upstream.hostname,
        port: this.upstream.port || 80,
        method: req.method,
        path: req.url,
        headers: forwardRequestHeaders(req.headers, this.upstream.host, this.preserveHost),
        agent: this.agent,
        signal,
        ...this.sourceAddressOf(req.socket),
      });
      upstreamReq.once('response', resolve);
      upstreamReq.once('error', (error: NodeJS.ErrnoException) => {
        const bodiless = req.method === 'GET' || req.method === 'HEAD';
        if (!retried && bodiless && upstreamReq.reusedSocket && error.code === 'ECONNRESET' && !signal.aborted) {
          this.forward(req, signal, true).then(resolve, reject);
        } else {
          reject(error);
        }
      });
      req.pipe(upstreamReq);
    });
  }

  /** WebSocket and other upgrades: the handshake gets one round trip; frames are not delayed. */
  private onUpgrade(req: IncomingMessage, socket: Socket, head: Buffer): void {
    const arrivedAtMs = this.timeline.nowMs();
    const index = this.requestCount++;
    this.counters.requests++;
    const base = { index, method: req.method ?? 'GET', url: req.url ?? '/', arrivedAtMs, bodyBytes: 0 };
    const refusal = this.turnedAway(socket);
    if (refusal) {
      this.record({ ...base, plan: null, outcome: refusal });
      return;
    }
    const plan = planRequest(this.currentLink(), this.random);
    void (async () => {
      await waitUntil(performance.now() + plan.delayMs + (plan.stallPhase === 'first-byte' ? plan.stallMs : 0), new AbortController().signal);
      if (socket.destroyed || this.hungSockets.has(socket) || this.closed) {
        this.record({ ...base, plan, outcome: 'reset' });
        return;
      }
      const upstreamSocket = net.connect({ host: this.upstream.hostname, port: Number(this.upstream.port || 80) });
      this.upgradeUpstreams.add(upstreamSocket);
      upstreamSocket.on('close', () => {
        this.upgradeUpstreams.delete(upstreamSocket);
        socket.destroy();
      });
      upstreamSocket.on('error', () => socket.destroy());
      socket.on('close', () => upstreamSocket.destroy());
      upstreamSocket.on('connect', () => {
        const headers = forwardRequestHeaders(req.headers, this.upstream.host, this.preserveHost);
        const lines = [`${req.method} ${req.url} HTTP/1.1`];
        for (const [name, value] of Object.entries(headers)) {
          for (const item of Array.isArray(value) ? value : [value]) lines.push(`${name}: ${String(item)}`);
        }
        // Upgrades need their hop-by-hop Connection/Upgrade fields.
        lines.push('connection: Upgrade', `upgrade: ${req.headers.upgrade ?? ''}`);
        upstreamSocket.write(`${lines.join('\r\n')}\r\n\r\n`);
        if (head.length > 0) upstreamSocket.write(head);
        upstreamSocket.pipe(socket);
        socket.pipe(upstreamSocket);
        this.record({ ...base, plan, outcome: 'ok' });
      });
    })();
  }
}
