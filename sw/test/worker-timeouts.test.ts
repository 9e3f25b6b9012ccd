/**
 * The worker's own timeouts (its background refreshes and probes, the own-origin check, the
 * page script's network wait) follow the policy in force: under the default `webpp` policy
 * they are that policy's 5 s ceiling and 2 s initial timeout (docs/service-worker.md), not
 * the paper's 15 s / 5 s. Driven with fake timers and a fetch that never answers a HEAD.
 */
import { BINDINGS_HEADER, WEBPP_DEFAULTS, encodeBindings } from '@webpp/core';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { ReplicaClient } from '../src/replica-client.js';
import { resolveWorkerOptions, workerTimeouts } from '../src/config.js';
import { memoryKeyValueStore } from '../src/storage.js';
import { ownOriginWaitMs } from '../src/page-script-cache.js';

const OWN = 'https://own.test';
const REPLICAS = ['https://a.test', 'https://b.test'];

interface HeadRecord {
  url: string;
  sentAtMs: number;
  abortedAtMs?: number;
}

function fakeNetwork(heads: HeadRecord[]): (request: Request) => Promise<Response> {
  const bindings = encodeBindings({
    directoryVersion: 1,
    bindings: [{ logical: `${OWN}/file.txt`, prefix: false, replicas: REPLICAS.map((origin) => `${origin}/file.txt`) }],
  }).value;
  return async (request) => {
    if (request.method === 'HEAD' || request.headers.has('range')) {
      // A background request to a server that never answers: it ends only when aborted.
      const record: HeadRecord = { url: request.url, sentAtMs: Date.now() };
      heads.push(record);
      return new Promise<Response>((_resolve, reject) => {
        request.signal.addEventListener('abort', () => {
          record.abortedAtMs = Date.now();
          reject(new DOMException('aborted', 'AbortError'));
        });
      });
    }
    return new Response(`from ${new URL(request.url).origin}`, { headers: { [BINDINGS_HEADER]: bindings, 'content-type': 'text/plain' } });
  };
}

afterEach(() => {
  vi.useRealTimers();
});

describe('the worker under the default webpp policy', () => {
  it('resolves the timeouts it uses itself from the webpp policy', () => {
    const { options } = resolveWorkerOptions({});
    expect(options.policy).toBe('webpp');
    expect(workerTimeouts(options)).toEqual({ timeoutCeilingMs: WEBPP_DEFAULTS.timeoutCeilingMs, initialTimeoutMs: WEBPP_DEFAULTS.initialTimeoutMs });
    // A site's own bound applies.
    expect(workerTimeouts(resolveWorkerOptions({ timeoutCeilingMs: 3_000 }).options).timeoutCeilingMs).toBe(3_000);
    // The paper's policy keeps the paper's bounds.
    expect(workerTimeouts(resolveWorkerOptions({ policy: 'paper' }).options)).toEqual({ timeoutCeilingMs: 15_000, initialTimeoutMs: 5_000 });
  });

  it("gives up a background request that hangs at the policy's 5 s ceiling, not the paper's 15 s", async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date', 'performance'] });
    const heads: HeadRecord[] = [];
    const network = fakeNetwork(heads);
    const client = new ReplicaClient({
      internal: { flushDelayMs: 0 },
      random: () => 0.5,
      selfOrigin: OWN,
      storage: memoryKeyValueStore(),
      fetch: network,
      observeResourceTiming: false,
      publish: () => undefined,
      unregister: async () => undefined,
      notifyPages: async () => undefined,
    });
    await client.ready;
    const pending: Promise<unknown>[] = [];
    const io = { fetch: network, waitUntil: (promise: Promise<unknown>) => void pending.push(promise) };
    // Learn the bindings from the own origin, then bound requests, a second apart, until the
    // policy measures a replica in the background (HEAD, or a ranged GET). The cold start's
    // race measures both replicas with the first request's GETs, so the first background
    // request is a refresh, which the refresh budget allows after some requests.
    await (await client.respond(new Request(`${OWN}/file.txt`, { headers: { accept: 'text/plain' } }), io)).text();
    for (let i = 0; i < 200 && heads.length === 0; i++) {
      await (await client.respond(new Request(`${OWN}/file.txt`), io)).text();
      await vi.advanceTimersByTimeAsync(1_000);
    }
    expect(heads.length).toBeGreaterThan(0);
    await vi.advanceTimersByTimeAsync(WEBPP_DEFAULTS.timeoutCeilingMs + 100);
    const sentEarly = heads.filter((head) => head.sentAtMs <= heads[0]!.sentAtMs + 50);
    for (const head of sentEarly) {
      expect(head.abortedAtMs, head.url).toBeDefined();
      expect(head.abortedAtMs! - head.sentAtMs).toBeLessThanOrEqual(WEBPP_DEFAULTS.timeoutCeilingMs + 100);
    }
    await vi.advanceTimersByTimeAsync(20_000);
  });
});

describe("the page script's network wait (page-script-cache.ts, ownOriginWaitMs)", () => {
  const view = (state: 'available' | 'failed' | 'unknown', sampleCount: number, timeoutMs?: number) => ({
    server: OWN,
    state,
    sampleCount,
    lastSampleAtMs: 0,
    ...(timeoutMs === undefined ? {} : { timeoutMs }),
  });

  it('is the timeout the policy gives the own origin, nothing while the policy holds it failed, the initial timeout before it is measured', () => {
    expect(ownOriginWaitMs([view('failed', 12, 500)], OWN, 2_000)).toBe(0);
    expect(ownOriginWaitMs([view('available', 12, 540)], OWN, 2_000)).toBe(540);
    expect(ownOriginWaitMs([view('available', 12, 5_000)], OWN, 2_000)).toBe(2_000);
    expect(ownOriginWaitMs([view('unknown', 0, 2_000)], OWN, 2_000)).toBe(2_000);
    expect(ownOriginWaitMs([], OWN, 2_000)).toBe(2_000);
  });

  it('follows the webpp policy: a measured own origin gets its 3 × p99 (at least 500 ms), an ejected one none', () => {
    const client = new ReplicaClient({ selfOrigin: OWN, storage: memoryKeyValueStore(), fetch: async () => new Response('') });
    const nowMs = Date.now();
    for (let i = 0; i < 8; i++) client.engine.observe({ server: OWN, purpose: 'request', outcome: 'served', ttfbMs: 20, nowMs: nowMs + i });
    expect(ownOriginWaitMs(client.policy.describe(nowMs), OWN, 2_000)).toBe(WEBPP_DEFAULTS.timeoutFloorMs);
    client.engine.observe({ server: OWN, purpose: 'request', outcome: 'network-error', nowMs: nowMs + 10 });
    expect(ownOriginWaitMs(client.policy.describe(nowMs + 10), OWN, 2_000)).toBe(0);
  });
});
