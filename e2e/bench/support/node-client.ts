/**
 * A Web++ client in Node with real HTTP: the selection engine the worker runs
 * (@webpp/core ClientEngine + a policy from core's registry), real fetch, real timers, and
 * bindings taken from the real `webpp-bindings` header of each response, as a browser with
 * the worker would learn them. One NodeWebppClient is one browser (its own bindings and
 * policy state). Used by benchmarks that need many concurrent clients without a browser
 * each (replication.bench.ts; the cache benchmarks may reuse it).
 *
 * What it leaves out of the worker: Resource Timing (ttfb is timed here around fetch),
 * IndexedDB persistence, mid-body resume (a body cut off is fetched again from the rest of
 * the plan, like the simulator's driver).
 */
import {
  BINDINGS_HEADER,
  BindingsIndex,
  ClientEngine,
  createPolicy,
  decodeBindings,
  remainingPlan,
  serverOf,
  type Cancel,
  type EngineAttempt,
  type EngineIO,
} from '@webpp/core';

/** The response the engine hands back: the head, and the body read by the exchange. */
interface NodeResponse {
  status: number;
  headers: Headers;
  body: Promise<Uint8Array>;
}

export interface NodeFetchResult {
  ok: boolean;
  status: number;
  /** Server (origin) that answered, when one did. */
  server?: string;
  bodyBytes: number;
  /** Request start → whole body, ms. */
  elapsedMs: number;
  body?: Uint8Array;
  headers?: Headers;
  failure?: string;
}

export interface NodeWebppClientOptions {
  /** Policy name in core's registry. Default 'webpp' (the worker's default). */
  policy?: string;
  policyOptions?: Record<string, unknown>;
  /** A whole request (all attempts) gives up after this long. Default 30 000 ms. */
  requestTimeoutMs?: number;
}

export class NodeWebppClient {
  private readonly bindings = new BindingsIndex();
  private readonly engine: ClientEngine<NodeResponse, undefined>;
  /** A physical URL known on each server, for the policy's refreshes and probes. */
  private readonly knownOn = new Map<string, string>();
  private readonly timers = new Set<ReturnType<typeof setTimeout>>();
  private readonly controllers = new Set<AbortController>();
  private closed = false;

  constructor(private readonly options: NodeWebppClientOptions = {}) {
    const policy = createPolicy(options.policy ?? 'webpp', { random: Math.random, now: () => Date.now() }, options.policyOptions);
    if (!policy) throw new RangeError(`unknown policy "${options.policy ?? 'webpp'}"`);
    const io: EngineIO<NodeResponse, undefined> = {
      now: () => Date.now(),
      setTimer: (delayMs, run) => this.setTimer(delayMs, run),
      send: (exchange, events) => {
        if (this.closed) return () => undefined;
        const controller = new AbortController();
        this.controllers.add(controller);
        const startedMs = performance.now();
        const headers: Record<string, string> = exchange.method === 'range' ? { range: `bytes=0-${Math.max(0, (exchange.rangeBytes ?? 1) - 1)}` } : {};
        let silenced = false;
        void (async () => {
          try {
            const response = await fetch(exchange.target, { method: exchange.method === 'head' ? 'HEAD' : 'GET', headers, signal: controller.signal });
            const ttfbMs = performance.now() - startedMs;
            const bodyStartMs = performance.now();
            const body = response.arrayBuffer().then((buffer) => new Uint8Array(buffer));
            body.then(
              (bytes) => !silenced && events.bodyComplete({ bodyBytes: bytes.byteLength, bodyMs: performance.now() - bodyStartMs }),
              () => !silenced && events.error('body cut off'),
            );
            if (!silenced) events.head({ status: response.status, ttfbMs, response: { status: response.status, headers: response.headers, body } });
            await body.catch(() => undefined);
          } catch (error) {
            if (!silenced) events.error((error as Error).message);
          } finally {
            this.controllers.delete(controller);
          }
        })();
        return () => {
          silenced = true;
          controller.abort();
        };
      },
      discard: (response) => void response.body.catch(() => undefined),
    };
    this.engine = new ClientEngine({ policy, io, backgroundTarget: (server) => this.knownOn.get(server) });
  }

  private setTimer(delayMs: number, run: () => void): Cancel {
    if (this.closed) return () => undefined;
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      run();
    }, Math.max(0, delayMs));
    timer.unref();
    this.timers.add(timer);
    return () => {
      clearTimeout(timer);
      this.timers.delete(timer);
    };
  }

  /** GET a logical URL the way the worker would: plan over its replicas, run, learn, keep the bindings. */
  async get(logicalUrl: string): Promise<NodeFetchResult> {
    const startedMs = performance.now();
    const binding = this.bindings.resolve(logicalUrl);
    const physicalUrls = binding?.physicalUrls ?? [logicalUrl];
    const targets = new Map(physicalUrls.map((url) => [serverOf(url), url]));
    const candidates = [...targets.keys()];
    const plan = this.engine.plan({ logicalUrl, method: 'GET', candidates }, (server) => targets.get(server));
    const failed = new Set<string>();
    for (let round = 0; round < candidates.length; round += 1) {
      const attempts: EngineAttempt[] = round === 0 ? plan : remainingPlan(plan, failed);
      if (attempts.length === 0) break;
      const result = await this.runOnce(attempts);
      this.engine.maintain(candidates);
      if (result.kind !== 'served') {
        const fallback = result.kind === 'failed' ? result.fallback : undefined;
        return { ok: false, status: fallback?.response.status ?? 0, bodyBytes: 0, elapsedMs: performance.now() - startedMs, failure: result.kind };
      }
      const { response, winner } = result;
      try {
        const body = await response.body;
        this.learn(response.headers, winner);
        const ok = response.status >= 200 && response.status < 400;
        return { ok, status: response.status, server: winner.server, bodyBytes: body.byteLength, elapsedMs: performance.now() - startedMs, body, headers: response.headers };
      } catch {
        failed.add(winner.server); // cut mid-body: the rest of the plan, as the simulator's driver does
      }
    }
    return { ok: false, status: 0, bodyBytes: 0, elapsedMs: performance.now() - startedMs, failure: 'cut-mid-body' };
  }

  private runOnce(attempts: readonly EngineAttempt[]): Promise<Parameters<Parameters<ClientEngine<NodeResponse, undefined>['run']>[1]>[0]> {
    const limitMs = this.options.requestTimeoutMs ?? 30_000;
    return new Promise((resolve) => {
      let cancel: Cancel = () => undefined;
      const timer = setTimeout(() => {
        cancel();
        resolve({ kind: 'aborted', attempts: [] });
      }, limitMs);
      cancel = this.engine.run(attempts, (result) => {
        clearTimeout(timer);
        resolve(result);
      });
    });
  }

  private learn(headers: Headers, winner: EngineAttempt): void {
    this.knownOn.set(winner.server, winner.target);
    const value = headers.get(BINDINGS_HEADER);
    if (value === null) return;
    const decoded = decodeBindings(value);
    if (!decoded.ok) return;
    this.bindings.apply(decoded.document);
    for (const binding of decoded.document.bindings) {
      for (const physical of binding.replicas) if (!physical.endsWith('*')) this.knownOn.set(serverOf(physical), physical);
    }
  }

  /** Stops every timer and exchange of this client. */
  close(): void {
    this.closed = true;
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
    for (const controller of this.controllers) controller.abort();
    this.controllers.clear();
  }
}
