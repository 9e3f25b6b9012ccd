/**
 * Web++'s extended Refresh algorithm (paper Section 4.1, Figure 4), run by @webpp/core
 * itself: rankReplicas picks the attempt order, LatencyTable keeps eq. (1)–(3) and the
 * timeouts, refreshTarget and dueProbes drive the asynchronous HEAD requests. This module
 * only plays the client's part around them (sending, timing, walking the attempts).
 *
 * The hedged variant adds one thing: if the best replica has not sent its first byte by
 * its p95 latency, the request is also sent to the second best, and the first first byte
 * wins (a "hedged request").
 */
import {
  FAST_PRESET,
  LatencyTable,
  PAPER_DEFAULTS,
  dueProbes,
  rankReplicas,
  refreshTarget,
  resolveSelectionConfig,
  type ReplicaAttempt,
  type SelectionConfig,
} from '@webpp/core';
import type { RandomSource } from '@webpp/netem/model';
import type { TimerHandle } from '../event-queue.js';
import type { ExchangeHandle, ExchangePurpose } from '../network.js';
import type { CancelRequest, LogicalRequest, Policy, PolicyClient, PolicyEnvironment, RequestResult } from '../policy.js';

/** Virtual time 0 maps to this table-clock time, so table times look like real epoch times. */
const TABLE_EPOCH_MS = 1_000_000_000_000;

export interface HedgeOptions {
  /** Hedge after this percentile of the best replica's latency. Default 95. */
  percentile?: number;
  /**
   * EWMA weight of the latency estimate behind that percentile. Default 0.05: with the
   * selection's r = 0.95 the variance is almost only the newest deviation, too jumpy to
   * place a hedge, so the hedge keeps a longer-memory estimate (a second LatencyTable).
   */
  ewmaWeight?: number;
}

export interface WebppPolicyOptions {
  /** Report name. Default "webpp". */
  name?: string;
  /** Parameters over `base`. */
  config?: Partial<SelectionConfig>;
  /** Default PAPER_DEFAULTS. */
  base?: Readonly<SelectionConfig>;
  /** One latency table shared by all clients (paper Section 4.1), or one each. Default true. */
  sharedTable?: boolean;
  /** Hedge requests (see the module comment); default off. */
  hedge?: HedgeOptions;
  /**
   * When a response breaks off mid-body (its server died, or its bytes stopped for longer
   * than the server's timeout), fetch the resource again from the next replica. Default
   * false, like the worker (sw/src/attempt-runner.ts), which streams a body to the page once
   * its head has arrived and so cannot fail over mid-body: such requests count as failed
   * ("cut-mid-body"). True models a client that buffers or resumes bodies.
   */
  midBodyFailover?: boolean;
}

interface TableState {
  table: LatencyTable;
  /** Longer-memory estimate for the hedge percentile (hedged policy only). */
  hedgeTable: LatencyTable | undefined;
  /** Servers with an asynchronous HEAD in flight: never two at once to one server. */
  headInFlight: Set<string>;
}

export function webppPolicy(options: WebppPolicyOptions = {}): Policy {
  const base = options.base ?? PAPER_DEFAULTS;
  const config = resolveSelectionConfig(options.config ?? {}, base);
  const hedge = options.hedge ? { percentile: options.hedge.percentile ?? 95, ewmaWeight: options.hedge.ewmaWeight ?? 0.05 } : undefined;
  const hedgeConfig = hedge
    ? // The pure percentile: no floor to speak of, no multiple of the mean.
      resolveSelectionConfig({ ewmaWeight: hedge.ewmaWeight, timeoutPercentile: hedge.percentile, timeoutFloorMs: 1, timeoutMeanMultiple: 0 }, config)
    : undefined;
  const name = options.name ?? (hedge ? 'hedged' : 'webpp');
  return {
    name,
    description: `${hedge ? `hedged at p${hedge.percentile} on ` : ''}extended Refresh (r=${config.ewmaWeight}, TTL=${config.ttlMs} ms, F=${config.probeIntervalMs} ms, S=${config.selectPercentile}, T=${config.timeoutPercentile})`,
    start(environment) {
      const clock = (): number => TABLE_EPOCH_MS + environment.queue.now();
      const newState = (): TableState => ({
        table: new LatencyTable(config, clock),
        hedgeTable: hedgeConfig ? new LatencyTable(hedgeConfig, clock) : undefined,
        headInFlight: new Set(),
      });
      const shared = (options.sharedTable ?? true) ? newState() : undefined;
      return {
        client: (clientIndex) =>
          new WebppClient(environment, shared ?? newState(), clientIndex, environment.random(name, 'client', clientIndex), {
            hedging: hedge !== undefined,
            midBodyFailover: options.midBodyFailover ?? false,
          }),
      };
    },
  };
}

/** The paper's parameters (Figure 10). */
export function webppPaperPolicy(): Policy {
  return webppPolicy({ name: 'webpp-paper', base: PAPER_DEFAULTS });
}

/** core's FAST_PRESET: short TTL and F. */
export function webppFastPolicy(): Policy {
  return webppPolicy({ name: 'webpp-fast', base: FAST_PRESET });
}

/** FAST_PRESET selection plus a hedge at the best replica's p95. */
export function hedgedPolicy(): Policy {
  return webppPolicy({ name: 'hedged', base: FAST_PRESET, hedge: {} });
}

interface Attempt {
  server: string;
  sentAtMs: number;
  handle: ExchangeHandle;
  timer: TimerHandle;
}

class WebppClient implements PolicyClient {
  private headCount = 0;

  constructor(
    private readonly environment: PolicyEnvironment,
    private readonly state: TableState,
    private readonly clientIndex: number,
    private readonly random: RandomSource,
    private readonly behaviour: { hedging: boolean; midBodyFailover: boolean },
  ) {}

  request(request: LogicalRequest, done: (result: RequestResult) => void): CancelRequest {
    const { queue } = this.environment;
    const { table } = this.state;
    const plan = rankReplicas(this.environment.servers, table, this.random);
    const live = new Set<Attempt>();
    const tried = new Set<string>();
    let nextAttempt = 0;
    let winner: Attempt | undefined;
    let hedgeTimer: TimerHandle | undefined;
    let finished = false;

    const cancelAll = (): void => {
      for (const attempt of live) {
        attempt.handle.cancel();
        queue.cancel(attempt.timer);
      }
      live.clear();
      queue.cancel(hedgeTimer);
    };
    const finish = (result: RequestResult): void => {
      if (finished) return;
      finished = true;
      cancelAll();
      done(result);
      this.afterRequest();
    };
    const lose = (attempt: Attempt): void => {
      // Figure 4: on a timeout (or error) the server is marked failed; try the next one.
      live.delete(attempt);
      queue.cancel(attempt.timer);
      table.markFailed(attempt.server);
      this.environment.observer.markedFailed(attempt.server, queue.now());
      if (winner === attempt) {
        // Cut off mid-body: start over elsewhere only if the client can (see midBodyFailover).
        if (!this.behaviour.midBodyFailover) return finish({ ok: false, failure: 'cut-mid-body' });
        winner = undefined;
      }
      if (finished || winner || live.size > 0) return;
      if (!launch('retry')) finish({ ok: false, failure: 'no-replica' });
    };
    const launch = (purpose: ExchangePurpose): boolean => {
      const next: ReplicaAttempt | undefined = plan[nextAttempt++];
      if (!next) return false;
      const sentAtMs = queue.now();
      // A second attempt on the same server within one request draws fresh luck.
      const key = tried.has(next.server) ? `${request.key}#${nextAttempt}` : request.key;
      tried.add(next.server);
      const attempt = { server: next.server, sentAtMs } as Attempt;
      attempt.timer = queue.at(sentAtMs + next.timeoutMs, () => {
        attempt.handle.cancel();
        lose(attempt);
      });
      attempt.handle = this.environment.network.send(
        { server: next.server, method: 'GET', bodyBytes: request.sizeBytes, key, purpose },
        {
          onFirstByte: (atMs) => {
            if (winner || finished) return;
            winner = attempt;
            queue.cancel(attempt.timer);
            this.recordSample(next.server, atMs - sentAtMs);
            // The first first byte wins; abandon the other (hedge) attempt.
            for (const other of live) {
              if (other === attempt) continue;
              other.handle.cancel();
              queue.cancel(other.timer);
              live.delete(other);
            }
            queue.cancel(hedgeTimer);
          },
          onComplete: () => finish({ ok: true, server: next.server }),
          onError: () => lose(attempt),
          onStall: (atMs, resumesAtMs) => {
            if (!this.behaviour.midBodyFailover || winner !== attempt) return;
            // An inactivity timeout as long as the server's first-byte timeout.
            const inactivityMs = table.timeoutMs(next.server);
            if (resumesAtMs !== null && resumesAtMs - atMs <= inactivityMs) return;
            attempt.timer = queue.at(atMs + inactivityMs, () => {
              attempt.handle.cancel();
              lose(attempt);
            });
          },
        },
      );
      live.add(attempt);
      return true;
    };

    if (!launch('request')) {
      finish({ ok: false, failure: 'no-replica' });
      return cancelAll;
    }
    const first = plan[0]!;
    const second = plan[1];
    if (this.behaviour.hedging && second && this.state.hedgeTable) {
      const hedgeAfterMs = this.state.hedgeTable.timeoutMs(first.server);
      if (hedgeAfterMs < first.timeoutMs) {
        hedgeTimer = queue.after(hedgeAfterMs, () => {
          if (!winner && !finished && nextAttempt === 1) launch('hedge');
        });
      }
    }
    return () => {
      finished = true;
      cancelAll();
      return winner ? 'cut-mid-body' : undefined;
    };
  }

  private recordSample(server: string, latencyMs: number): void {
    const before = this.state.table.get(server);
    if (before && before.sampleCount > 0 && latencyMs > 0) {
      this.environment.observer.predictionError(Math.abs(before.meanMs - latencyMs) / latencyMs);
    }
    this.state.table.recordSample(server, latencyMs);
    this.state.hedgeTable?.recordSample(server, latencyMs);
  }

  /** Figure 4, after each request: refresh the oldest expired entry; probe due failed servers. */
  private afterRequest(): void {
    const { table, headInFlight } = this.state;
    const target = refreshTarget(table, this.environment.servers);
    if (target !== undefined && !headInFlight.has(target)) this.sendHead(target, 'refresh');
    for (const server of dueProbes(table)) {
      if (headInFlight.has(server)) continue;
      table.recordProbeSent(server);
      this.sendHead(server, 'probe');
    }
  }

  /** An asynchronous HEAD: its latency refreshes the table; it never delays a user request. */
  private sendHead(server: string, purpose: 'refresh' | 'probe'): void {
    const { queue, network } = this.environment;
    const { table, headInFlight } = this.state;
    headInFlight.add(server);
    const sentAtMs = queue.now();
    const key = `${this.clientIndex}|${purpose}|${this.headCount++}`;
    const fail = (): void => {
      headInFlight.delete(server);
      // A failed refresh marks the server failed; a failed probe just waits for the next one.
      if (purpose === 'refresh') {
        table.markFailed(server);
        this.environment.observer.markedFailed(server, queue.now());
      }
    };
    const timer = queue.at(sentAtMs + table.timeoutMs(server), () => {
      handle.cancel();
      fail();
    });
    const handle = network.send(
      { server, method: 'HEAD', bodyBytes: 0, key, purpose },
      {
        onFirstByte: (atMs) => {
          queue.cancel(timer);
          handle.cancel();
          headInFlight.delete(server);
          this.recordSample(server, atMs - sentAtMs);
        },
        onError: () => {
          queue.cancel(timer);
          fail();
        },
      },
    );
  }
}
