/**
 * The utilisation an origin pushes with its service time (issue 13; stats/utilisation.ts), on
 * real servers on loopback: `Server-Timing: webpp;dur=…;util=…` says how busy the server was
 * over its last full measurement interval — the share of its concurrency slots held, or its
 * event loop's busy share (when it is the only server in its process) — and a loaded peer's
 * value reaches the clients of another origin in `webpp-load` through the signed peer exchange.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { LOAD_HEADER, parseLoadHeader, parseServerTimingUtilisation } from '@webpp/core';
import type { FastifyInstance } from 'fastify';
import { startReplicaServer, type ReplicaServer, type ReplicaServerOptions } from '../src/server.js';
import { HEALTH_PATH } from '../src/routes/public.js';
import { MeteredConcurrencyGate } from '../src/stats/utilisation.js';
import { ADMIN_TOKEN, auth, removeTempDirs, startQuietPeers, tempDir, waitFor } from './helpers.js';
import { WEBPP_INTERNALS } from '../src/options/internals.js';

const servers: ReplicaServer[] = [];

// Each test's servers close with it: the event loop counts only for a server alone in its process (utilisation.ts).
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.close()));
});

afterAll(async () => {
  await removeTempDirs();
});

async function site(): Promise<string> {
  const root = await tempDir();
  await writeFile(join(root, 'a.png'), 'png');
  return root;
}

/** `/slow` holds its request ~`delayMs` on a timer (the event loop idle); `/spin` keeps the loop busy that long. */
function routes(delayMs: number) {
  return (app: FastifyInstance): void => {
    app.get('/slow', async () => {
      await new Promise((resolve) => setTimeout(resolve, delayMs));
      return 'done';
    });
    app.get('/spin', () => {
      const untilMs = performance.now() + delayMs;
      while (performance.now() < untilMs) {
        // busy: the event loop does nothing else meanwhile
      }
      return 'done';
    });
  };
}

/**
 * `parallel` clients request `path` back to back for `durationMs` (at most 200 requests);
 * returns the Server-Timing `util` of each response, in order of completion.
 */
async function steadyStream(url: string, path: string, parallel: number, durationMs: number): Promise<Array<number | undefined>> {
  const deadline = Date.now() + durationMs;
  const seen: Array<number | undefined> = [];
  let budget = 200;
  await Promise.all(
    Array.from({ length: parallel }, async () => {
      while (Date.now() < deadline && budget-- > 0) {
        const response = await fetch(`${url}${path}`);
        await response.text();
        seen.push(parseServerTimingUtilisation(response.headers.get('server-timing')));
      }
    }),
  );
  return seen;
}

const INTERVAL_MS = 300;

/**
 * The utilisation once the load has stopped: polled once per interval until an interval
 * reads idle (< 0.2), for at most 20 intervals — on a loaded machine the last requests of a
 * stream may still be in service for a while (found by CI under load: 0.39 after 2.5 intervals).
 */
function idleUtilisation(url: string): Promise<number> {
  return waitFor(
    'an idle interval',
    async () => {
      const utilisation = parseServerTimingUtilisation((await fetch(`${url}${HEALTH_PATH}`)).headers.get('server-timing'));
      return utilisation !== undefined && utilisation < 0.2 ? utilisation : false;
    },
    { timeoutMs: 20 * INTERVAL_MS, intervalMs: INTERVAL_MS },
  );
}

describe('Server-Timing util: the busy share of the last full interval', () => {
  it('is high while a steady stream keeps the one slot held (event loop idle), and low after an idle interval', async () => {
    const server = await startReplicaServer({
      root: await site(),
      adminToken: ADMIN_TOKEN,
      injectScript: false,
      maxConcurrentRequests: 1,
      serviceTimeIntervalMs: INTERVAL_MS,
      routes: routes(100),
    });
    servers.push(server);
    // Two clients through one slot: it is never free for 4 intervals; the last answers carry a
    // value of an interval that lay wholly inside the stream.
    const seen = await steadyStream(server.url, '/slow', 2, 4 * INTERVAL_MS);
    const busy = seen.at(-1);
    expect(busy, JSON.stringify(seen)).toBeGreaterThan(0.5);
    // The statistics and /metrics show the value pushed now.
    const stats = (await (await fetch(`${server.url}/.well-known/webpp/stats`, { headers: auth })).json()) as { origin: { push: { pushedUtilisation: number | null } } };
    expect(stats.origin.push.pushedUtilisation).toBeGreaterThanOrEqual(0);
    expect(await (await fetch(`${server.url}/.well-known/webpp/metrics`, { headers: auth })).text()).toMatch(/^webpp_push_utilisation (0|1|0\.\d+)$/m);
    // Nothing for two intervals and more: the last full interval was idle. (The origin's own
    // endpoints take no slot; polling them is all the work there is.)
    expect(await idleUtilisation(server.url)).toBeLessThan(0.2);
  });

  it('without a concurrency limit, follows the event loop (the only server in its process): high while requests keep it busy', async () => {
    const server = await startReplicaServer({ root: await site(), adminToken: ADMIN_TOKEN, injectScript: false, serviceTimeIntervalMs: INTERVAL_MS, routes: routes(60) });
    servers.push(server);
    const seen = await steadyStream(server.url, '/spin', 2, 4 * INTERVAL_MS);
    expect(seen.at(-1), JSON.stringify(seen)).toBeGreaterThan(0.5);
    expect(await idleUtilisation(server.url)).toBeLessThan(0.2);
  });

  it('counts slot time, not requests: one slot of two held half the time is a quarter', () => {
    let nowMs = 0;
    const gate = new MeteredConcurrencyGate({ maxConcurrentRequests: 2, maxQueuedRequests: 4 }, () => nowMs);
    gate.takeSlotMs();
    gate.acquire();
    nowMs = 50;
    gate.release();
    nowMs = 100;
    expect(gate.takeSlotMs() / (gate.limit * 100)).toBe(0.25);
    // A waiter handed the slot keeps it held: two slots busy, then one waits and takes one over.
    gate.acquire();
    gate.acquire();
    const waiting = gate.acquire();
    nowMs = 150;
    gate.release(); // handed to the waiter: still two held
    nowMs = 200;
    expect(waiting.ready).toBeDefined();
    expect(gate.takeSlotMs()).toBe(200);
  });
});

/**
 * Two quiet peers (test helpers' startQuietPeers) with `/slow` and `/spin`: the home origin,
 * without a concurrency limit, and the loaded one, with `options` (its limit among them).
 */
async function homeAndLoaded(options: { serviceTimeIntervalMs: number; maxConcurrentRequests: number } & Partial<ReplicaServerOptions>): Promise<[string, string]> {
  const { urls, servers: started } = await startQuietPeers(2, async (index) => ({
    root: await site(),
    routes: routes(100),
    ...options,
    maxConcurrentRequests: index === 1 ? options.maxConcurrentRequests : 0,
  }));
  servers.push(...started);
  return urls as [string, string];
}

describe("a peer's utilisation travels in webpp-load and in its load record", () => {
  it("a loaded peer's util reaches another origin's webpp-load and replication's load table through the signed exchange", async () => {
    // Sync and pings far apart: the value arrives with the announcement of a new pushed value.
    const [home, loaded] = await homeAndLoaded({ serviceTimeIntervalMs: 100, maxConcurrentRequests: 1 });
    // The loaded peer serves a steady stream (bounded: 3 s) while a client reads only the home origin's headers.
    const stream = steadyStream(loaded, '/slow', 2, 3_000);
    const forwarded = await waitFor(
      "the home origin forwards the loaded peer's high utilisation",
      async () => {
        const load = parseLoadHeader((await fetch(`${home}/a.png`)).headers.get(LOAD_HEADER)).find((row) => row.server === loaded);
        return load?.utilisation !== undefined && load.utilisation > 0.5 ? load : undefined;
      },
      { timeoutMs: 3_000, intervalMs: 100 },
    );
    // Replication's `utilisation` metric reads the same meter: the loaded peer's load record
    // (DCWS's load table, held by the home origin) says it is busy, although its event loop,
    // shared with the home origin, is idle while the slot is held on a timer.
    const record = await waitFor(
      "the loaded peer's load record with its busy share",
      () => {
        const held = servers[0]?.app.webpp.peerState?.record(loaded)?.record;
        return held !== undefined && held.utilisation > 0.5 ? held : undefined;
      },
      { timeoutMs: 3_000, intervalMs: 50 },
    );
    await stream;
    expect(forwarded.utilisation).toBeLessThanOrEqual(1);
    expect(record.utilisation).toBeLessThanOrEqual(1);
    // The home origin has no slots, and shares its event loop with the other server: it has no share of its own to push.
    expect(parseServerTimingUtilisation((await fetch(`${home}/a.png`)).headers.get('server-timing'))).toBeUndefined();
    const metrics = await (await fetch(`${home}/.well-known/webpp/metrics`, { headers: auth })).text();
    expect(metrics).toMatch(/^webpp_push_peer_utilisation\{peer="http:\/\/127\.0\.0\.1:\d+"\} /m);
  });
});

describe('a change of utilisation alone', () => {
  it('is announced to the peers at once, although the service time stays the same', async () => {
    // No sync or ping for the test's length, and a service time pushed once: only an
    // announcement of the utilisation can carry its change.
    const [home, loaded] = await homeAndLoaded({ serviceTimeIntervalMs: 100, [WEBPP_INTERNALS]: { serviceTimeThreshold: 100, serviceTimeThresholdDecay: 0.001 }, maxConcurrentRequests: 2 });
    const forwardedUtilisation = async (): Promise<number | undefined> =>
      parseLoadHeader((await fetch(`${home}/a.png`)).headers.get(LOAD_HEADER)).find((row) => row.server === loaded)?.utilisation;
    // The loaded peer's first service time (one request as long as the later ones), announced;
    // then it is idle, and says so.
    await (await fetch(`${loaded}/slow`)).text();
    await waitFor('the idle peer announced', async () => ((await forwardedUtilisation()) ?? 1) < 0.2, { timeoutMs: 5_000, intervalMs: 100 });
    // Both slots held by a steady stream of requests as long as the first: the same service
    // time, a busy server.
    const stream = steadyStream(loaded, '/slow', 2, 5_000);
    const busy = await waitFor('the busy share forwarded', async () => {
      const utilisation = await forwardedUtilisation();
      return utilisation !== undefined && utilisation > 0.5 ? utilisation : undefined;
    }, { timeoutMs: 5_000, intervalMs: 100 });
    await stream;
    expect(busy).toBeLessThanOrEqual(1);
  });
});
