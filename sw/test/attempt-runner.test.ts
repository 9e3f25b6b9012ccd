/**
 * The failover engine against real HTTP servers on loopback (Node's fetch): order, timeouts,
 * 5xx, stale 404s, hedging, the page's abort, and nudges from failures seen elsewhere.
 */
import type { AddressInfo } from 'node:net';
import Fastify from 'fastify';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runAttempts } from '../src/attempt-runner.js';
import type { AttemptSpec, RunnerIO } from '../src/attempt-runner.js';
import type { AttemptOutcome } from '../src/messages.js';

interface Behaviour {
  delayMs?: number;
  status?: number;
  hang?: boolean;
}

const servers: FastifyInstance[] = [];
const hits = new Map<string, number>();

async function server(name: string, behaviour: Behaviour): Promise<string> {
  const app = Fastify({ forceCloseConnections: true });
  app.get('/*', async (_request, reply) => {
    hits.set(name, (hits.get(name) ?? 0) + 1);
    if (behaviour.hang) await new Promise(() => undefined);
    if (behaviour.delayMs) await new Promise((resolve) => setTimeout(resolve, behaviour.delayMs));
    return reply.code(behaviour.status ?? 200).send(name);
  });
  await app.listen({ port: 0, host: '127.0.0.1' });
  servers.push(app);
  return `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
}

let ok: string;
let slow: string;
let hung: string;
let broken: string;
let missing: string;
let dead: string;

beforeAll(async () => {
  ok = await server('ok', {});
  slow = await server('slow', { delayMs: 300 });
  hung = await server('hung', { hang: true });
  broken = await server('broken', { status: 503 });
  missing = await server('missing', { status: 404 });
  // A port nobody listens on: start a server, note its port, stop it.
  const gone = Fastify();
  await gone.listen({ port: 0, host: '127.0.0.1' });
  dead = `http://127.0.0.1:${(gone.server.address() as AddressInfo).port}`;
  await gone.close();
});

afterAll(async () => {
  for (const app of servers) {
    app.server.closeAllConnections();
    await app.close();
  }
});

function spec(server: string, overrides: Partial<AttemptSpec> = {}): AttemptSpec {
  return { server, physicalUrl: `${server}/file.txt`, timeoutMs: 1_000, reason: 'test', ...overrides };
}

function io(events: { failures: [string, AttemptOutcome][]; responses: string[] } = { failures: [], responses: [] }): RunnerIO {
  return {
    fetch: (request) => fetch(request),
    buildRequest: (attempt, signal) => new Request(attempt.physicalUrl, { signal }),
    now: () => performance.now(),
    onResponse: (attempt) => void events.responses.push(attempt.server),
    onServerFailure: (attempt, outcome) => void events.failures.push([attempt.server, outcome]),
  };
}

describe('runAttempts', () => {
  it('serves from the first replica when it answers', async () => {
    const result = await runAttempts([spec(ok), spec(slow)], io());
    expect(result.kind).toBe('served');
    if (result.kind !== 'served') return;
    expect(await result.response.text()).toBe('ok');
    expect(result.attempts.map((a) => [a.server, a.outcome])).toEqual([[ok, 'served']]);
  });

  it('fails over past a dead server, a 5xx and a stale 404 to the replica that holds the resource', async () => {
    const events = { failures: [] as [string, AttemptOutcome][], responses: [] as string[] };
    const result = await runAttempts([spec(dead), spec(broken), spec(missing), spec(ok)], io(events));
    expect(result.kind).toBe('served');
    if (result.kind !== 'served') return;
    expect(await result.response.text()).toBe('ok');
    expect(result.attempts.map((a) => a.outcome)).toEqual(['network-error', 'server-error', 'stale', 'served']);
    expect(result.attempts.map((a) => a.status)).toEqual([undefined, 503, 404, 200]);
    // Dead and 5xx servers are reported failed; a 404 only means the binding is stale.
    expect(events.failures).toEqual([
      [dead, 'network-error'],
      [broken, 'server-error'],
    ]);
  });

  it('aborts a hung server at its timeout and moves on', async () => {
    const events = { failures: [] as [string, AttemptOutcome][], responses: [] as string[] };
    const result = await runAttempts([spec(hung, { timeoutMs: 150 }), spec(ok)], io(events));
    expect(result.kind).toBe('served');
    expect(result.attempts.map((a) => a.outcome)).toEqual(['timeout', 'served']);
    expect(events.failures).toEqual([[hung, 'timeout']]);
  });

  it('returns the most telling failed answer when every replica fails (404 over 5xx)', async () => {
    const result = await runAttempts([spec(missing), spec(broken), spec(dead)], io());
    expect(result.kind).toBe('failed');
    if (result.kind !== 'failed') return;
    expect(result.fallback?.attempt.server).toBe(missing);
    expect(result.fallback?.response.status).toBe(404);
    expect(await result.fallback?.response.text()).toBe('missing');
  });

  it('fails without a fallback when no replica answered at all', async () => {
    const result = await runAttempts([spec(dead), spec(hung, { timeoutMs: 100 })], io());
    expect(result).toMatchObject({ kind: 'failed' });
    if (result.kind !== 'failed') return;
    expect(result.fallback).toBeUndefined();
    expect(result.attempts.map((a) => a.outcome)).toEqual(['network-error', 'timeout']);
  });

  it('hedges: starts the next replica after hedgeAfterMs and takes the first answer', async () => {
    const before = hits.get('ok') ?? 0;
    const result = await runAttempts([spec(slow), spec(ok, { hedgeAfterMs: 50 })], io());
    expect(result.kind).toBe('served');
    if (result.kind !== 'served') return;
    expect(result.winner.server).toBe(ok);
    expect(result.attempts.find((a) => a.server === slow)?.outcome).toBe('cancelled');
    expect(result.attempts.find((a) => a.server === ok)?.startedAfterMs).toBeGreaterThanOrEqual(45);
    expect(hits.get('ok')).toBe(before + 1);
  });

  it('without hedging, never asks the second replica while the first answers in time', async () => {
    const before = hits.get('ok') ?? 0;
    const result = await runAttempts([spec(slow), spec(ok)], io());
    expect(result.kind === 'served' && result.winner.server).toBe(slow);
    expect(hits.get('ok') ?? 0).toBe(before);
  });

  it('stops everything when the page aborts', async () => {
    const controller = new AbortController();
    const pending = runAttempts([spec(hung, { timeoutMs: 5_000 }), spec(ok)], io(), controller.signal);
    setTimeout(() => controller.abort(), 50);
    const result = await pending;
    expect(result.kind).toBe('aborted');
    expect(result.attempts.map((a) => a.outcome)).toEqual(['aborted']);
  });

  it('moves on at once when another request marks the waited-on server failed', async () => {
    let markFailed: (() => void) | undefined;
    const runner: RunnerIO = { ...io(), watchServerFailure: (_server, onFailed) => ((markFailed = onFailed), () => undefined) };
    const pending = runAttempts([spec(hung, { timeoutMs: 5_000 }), spec(ok)], runner);
    setTimeout(() => markFailed?.(), 50);
    const result = await pending;
    expect(result.kind === 'served' && result.winner.server).toBe(ok);
    // The hung attempt was cancelled by the winner, not ended by its own 5 s timeout.
    expect(result.attempts.map((a) => a.outcome)).toEqual(['cancelled', 'served']);
  });

  describe('timeouts with a deadline (deadlineMs): the timed-out attempt stays as a hedge', () => {
    it('the only replica slower than its timeout still serves (marked failed at the timeout)', async () => {
      const events = { failures: [] as [string, AttemptOutcome][], responses: [] as string[] };
      const result = await runAttempts([spec(slow, { timeoutMs: 100, deadlineMs: 2_000 })], io(events));
      expect(result.kind).toBe('served');
      if (result.kind !== 'served') return;
      expect(await result.response.text()).toBe('slow');
      expect(result.attempts).toEqual([expect.objectContaining({ server: slow, outcome: 'served', timedOut: true, status: 200 })]);
      expect(events.failures).toEqual([[slow, 'timeout']]);
    });

    it('without a deadline the same request fails at the timeout, as before', async () => {
      const result = await runAttempts([spec(slow, { timeoutMs: 100 })], io());
      expect(result.kind).toBe('failed');
      expect(result.attempts.map((a) => a.outcome)).toEqual(['timeout']);
    });

    it('asks the next replica at the timeout and takes whichever answers first', async () => {
      const events = { failures: [] as [string, AttemptOutcome][], responses: [] as string[] };
      // slow answers at 300 ms; hung (asked at 100 ms) never does: slow wins after its own timeout.
      const result = await runAttempts(
        [spec(slow, { timeoutMs: 100, deadlineMs: 2_000 }), spec(hung, { timeoutMs: 100, deadlineMs: 2_000 })],
        io(events),
      );
      expect(result.kind === 'served' && result.winner.server).toBe(slow);
      expect(result.attempts.map((a) => [a.server, a.outcome, a.timedOut])).toEqual([
        [slow, 'served', true],
        [hung, 'timeout', true], // cancelled by the winner, but it did time out
      ]);
      expect(result.attempts[1]?.startedAfterMs).toBeGreaterThanOrEqual(95);
      expect(events.failures).toEqual([
        [slow, 'timeout'],
        [hung, 'timeout'],
      ]);
    });

    it('a faster next replica wins over the timed-out one, which is cancelled', async () => {
      const result = await runAttempts([spec(hung, { timeoutMs: 100, deadlineMs: 2_000 }), spec(ok, { deadlineMs: 2_000 })], io());
      expect(result.kind === 'served' && result.winner.server).toBe(ok);
      expect(result.attempts.map((a) => a.outcome)).toEqual(['timeout', 'served']);
    });

    it('aborts at the deadline and reports the server failed once', async () => {
      const events = { failures: [] as [string, AttemptOutcome][], responses: [] as string[] };
      const startedMs = performance.now();
      const result = await runAttempts([spec(hung, { timeoutMs: 100, deadlineMs: 400 })], io(events));
      expect(result.kind).toBe('failed');
      expect(performance.now() - startedMs).toBeGreaterThanOrEqual(395);
      expect(result.attempts.map((a) => [a.outcome, a.timedOut])).toEqual([['timeout', true]]);
      expect(events.failures).toEqual([[hung, 'timeout']]);
    });

    it('its own failure report does not start the next attempt twice', async () => {
      const watchers = new Map<string, Set<() => void>>();
      const started: string[] = [];
      const runner: RunnerIO = {
        ...io(),
        fetch: (request) => (started.push(new URL(request.url).origin), fetch(request)),
        // Like ReplicaClient: marking a server failed tells every attempt waiting on it.
        onServerFailure: (attempt) => watchers.get(attempt.server)?.forEach((watcher) => watcher()),
        watchServerFailure: (server, onFailed) => {
          const set = watchers.get(server) ?? new Set();
          watchers.set(server, set.add(onFailed));
          return () => void set.delete(onFailed);
        },
      };
      const result = await runAttempts(
        [spec(slow, { timeoutMs: 100, deadlineMs: 2_000 }), spec(hung, { timeoutMs: 1_000, deadlineMs: 2_000 }), spec(ok)],
        runner,
      );
      expect(result.kind === 'served' && result.winner.server).toBe(slow);
      expect(started).toEqual([`${slow}`, `${hung}`]);
    });
  });

  it('treats a request the platform refuses to build like a dead server', async () => {
    const runner: RunnerIO = {
      ...io(),
      buildRequest: (attempt, signal) => {
        if (attempt.server === broken) throw new TypeError('refused');
        return new Request(attempt.physicalUrl, { signal });
      },
    };
    const result = await runAttempts([spec(broken), spec(ok)], runner);
    expect(result.attempts.map((a) => a.outcome)).toEqual(['network-error', 'served']);
  });
});
