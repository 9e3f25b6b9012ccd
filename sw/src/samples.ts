/**
 * The learn stage's measurements in the worker: every answered exchange becomes a sample for
 * the policy, taken the way the replica, not the browser, determines it — from the worker's
 * Resource Timing entries (ttfb-sampler.ts: responseStart − requestStart, and the body's
 * bytes and responseStart → responseEnd), so waiting in the browser's per-host queue or an
 * HTTP-cache hit never counts. Failures come from core's engine; they are noted here first,
 * so that a sample of an earlier answer still waiting for its entry cannot undo them.
 */
import { ClientEngine } from '@webpp/core';
import type { Exchange, ExchangeSample, ServerId } from '@webpp/core';
import type { ConnectionQueue } from './connection-queue.js';
import type { WorkerPlugin } from './plugins.js';
import { TtfbSampler } from './ttfb-sampler.js';
import { wasPreloaded } from './navigation-preload.js';
import type { BodyTiming } from './ttfb-sampler.js';

export interface SampleStageOptions {
  queue: ConnectionQueue;
  /** Where a finished sample goes: the engine's learn stage (ClientEngine.observe). */
  observe(sample: ExchangeSample): void;
  /** A response the HTTP cache served: not a sample. */
  onCacheHit?(server: ServerId): void;
  /** An untimed response that waited in the browser's queue: not a sample. */
  onQueued?(server: ServerId): void;
  /** Watch the worker's Resource Timing entries. Default true. */
  observeResourceTiming?: boolean;
}

export class SampleStage {
  private readonly sampler: TtfbSampler;

  constructor(private readonly options: SampleStageOptions) {
    this.sampler = new TtfbSampler({
      now: () => performance.now(),
      maxPending: 1_024,
      queue: options.queue,
      sink: {
        record: (server, ttfbMs, kind, body?: BodyTiming, protocol?: string) =>
          options.observe({ server, purpose: kind, outcome: 'served', nowMs: Date.now(), ttfbMs, ...body, protocol }),
        skipped: (server) => options.onCacheHit?.(server),
        queued: (server) => options.onQueued?.(server),
      },
    });
    if (options.observeResourceTiming !== false) this.sampler.observeResourceTiming();
  }

  /** An answered exchange: its sample waits for its Resource Timing entry. */
  add(exchange: Exchange, response: Response, elapsedMs: number, sentAtMs: number, mayBeCached: boolean): void {
    // A navigation's preload left before the worker asked (navigation-preload.ts): its timing says nothing.
    if (wasPreloaded(response)) return;
    this.sampler.add({
      url: exchange.target,
      server: exchange.server,
      kind: exchange.purpose,
      sentAtMs,
      headersAtMs: sentAtMs + elapsedMs,
      mayBeCached: mayBeCached && response.status !== 304,
    });
  }

  /** Before the policy takes a sample from the engine: a failure makes older pending samples stale news. */
  noteEngineSample(sample: ExchangeSample): void {
    if (ClientEngine.isFailure(sample.outcome)) this.sampler.noteFailure(sample.server);
  }

  /** Records samples whose entries are overdue. */
  expire(): void {
    this.sampler.expire();
  }
}

/** fetchDidSucceed: every answer below 500 is a sample once its Resource Timing entry is in. */
export function samplesPlugin(samples: SampleStage): WorkerPlugin {
  return {
    fetchDidSucceed({ bound, exchange, response, outcome, elapsedMs, sentAtMs, resume }) {
      if (outcome === 'server-error') return;
      const { method, cache } = bound.request;
      samples.add(exchange, response, elapsedMs, sentAtMs, !resume && method === 'GET' && cache !== 'no-store' && cache !== 'reload');
    },
  };
}
