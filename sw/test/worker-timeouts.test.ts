/**
 * The worker's own timeouts (its background refreshes and probes, the own-origin check)
 * follow the policy in force: under the default `webpp` policy they are that policy's 5 s
 * ceiling and 2 s initial timeout (docs/service-worker.md), not the paper's 15 s / 5 s. Driven with fake timers and a fetch that never answers a HEAD.
 */
import { BINDINGS_HEADER, WEBPP_DEFAULTS, encodeBindings } from '@webpp/core';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { ReplicaClient } from '../src/replica-client.js';
import { resolveWorkerOptions, workerTimeouts } from '../src/config.js';
import { memoryKeyValueStore } from '../src/storage.js';

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
