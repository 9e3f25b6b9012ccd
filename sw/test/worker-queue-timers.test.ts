/**
 * The worker's queue timers ask the policy how many exchanges a replica takes at once
 * (ClientPolicy.exchangesAtOnce; issue 22 §2, bursts): six over HTTP/1.1, a hundred streams
 * over h2 (the protocol the policy learnt from Resource Timing's nextHopProtocol), fewer when
 * the server's own concurrency is lower. Before, the worker passed Chromium's six for every
 * replica, so over h2 a request behind six of this client's exchanges waited for a connection
 * it does not need, and a replica that hung it was never timed out.
 *
 * Driven through the worker's engine (worker-engine.ts) with fake timers: six requests to A
 * get their heads (their bodies keep streaming, so they stay in the engine's ledger), then a
 * seventh and an eighth that A never answers (two silent timeouts in a row eject a replica:
 * core server-record.ts, SILENT_FAILURES_TO_EJECT).
 */
import { createWebppPolicy } from '@webpp/core';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { resolveWorkerOptions } from '../src/config.js';
import { ConnectionQueue } from '../src/connection-queue.js';
import type { ExchangeSender } from '../src/fetch-io.js';
import { PolicyStore } from '../src/policy-store.js';
import { ProbeUrls } from '../src/server-memory.js';
import { StateReporter } from '../src/state-reporter.js';
import { memoryKeyValueStore } from '../src/storage.js';
import { workerEngine } from '../src/worker-engine.js';

const A = 'https://a.test';
const TIMEOUT_MS = 1_000;

afterEach(() => {
  vi.useRealTimers();
});

/** A sender to A: the first `answered` requests get a head and a body that never ends; the rest hang. */
function sender(answered: number): ExchangeSender {
  let sent = 0;
  return {
    build: (exchange, signal) => new Request(`${exchange.server}/r${sent}`, { signal }),
    fetch: (request) => {
      sent++;
      if (sent > answered) return new Promise<Response>((_resolve, reject) => request.signal.addEventListener('abort', () => reject(new DOMException('aborted', 'AbortError'))));
      return Promise.resolve(new Response(new ReadableStream({ pull: () => new Promise(() => undefined) }), { status: 200 }));
    },
  };
}

async function seventhRequest(protocol: string): Promise<{ state: string | undefined; outcomes: string[] }> {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date', 'performance'] });
  const policy = createWebppPolicy({ random: () => 0.5, now: Date.now });
  // A measured over `protocol`: twelve answers of 20 ms.
  for (let i = 0; i < 12; i++) policy.observe({ server: A, purpose: 'request', outcome: 'served', nowMs: Date.now() + i, ttfbMs: 20, protocol });
  const { options } = resolveWorkerOptions({});
  const { engine } = workerEngine({
    policy,
    options,
    selfOrigin: 'https://own.test',
    random: () => 0.5,
    probeUrls: new ProbeUrls(),
    connections: new ConnectionQueue({ now: () => performance.now() }),
    plainFetch: () => new Promise<Response>(() => undefined),
    reporter: new StateReporter({ historySize: 16 }),
    store: new PolicyStore({ policy, storage: memoryKeyValueStore(), flushDelayMs: 60_000 }),
    observeResourceTiming: false,
  });
  const outcomes: string[] = [];
  const context = sender(6);
  const request = (): void =>
    void engine.run([{ server: A, target: A, timeoutMs: TIMEOUT_MS, deadlineMs: 3 * TIMEOUT_MS, reason: 'test' }], (result) => outcomes.push(result.kind), { context });
  for (let i = 0; i < 6; i++) request();
  await vi.advanceTimersByTimeAsync(50);
  // The six heads are in; their bodies still stream. The seventh and eighth: A never answers them.
  request();
  request();
  await vi.advanceTimersByTimeAsync(TIMEOUT_MS + 100);
  return { state: policy.describe(Date.now()).find((view) => view.server === A)?.state, outcomes };
}

describe("the worker's queue timers follow the replica's protocol", () => {
  it('over h2 the seventh and eighth requests are timed from their send: A, silent since, is marked failed', async () => {
    const { state, outcomes } = await seventhRequest('h2');
    expect(outcomes.filter((kind) => kind === 'served')).toHaveLength(6);
    expect(state).toBe('failed');
  });

  it('over HTTP/1.1 it waits for one of the six connections: no timeout, A stays available', async () => {
    const { state, outcomes } = await seventhRequest('http/1.1');
    expect(outcomes.filter((kind) => kind === 'served')).toHaveLength(6);
    expect(state).toBe('available');
  });
});
