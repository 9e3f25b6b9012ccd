import http from 'node:http';
import { performance } from 'node:perf_hooks';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  NetemError,
  Timeline,
  startLinkEmulator,
  startScenarioEmulators,
  type LinkEmulator,
  type RequestRecord,
  type Scenario,
} from '../src/index.js';
import { outcomeOf, startUpstream, timedGet, waitFor, type Upstream } from './helpers.js';

let upstream: Upstream;
const emulators: LinkEmulator[] = [];

async function emulate(options: Omit<Parameters<typeof startLinkEmulator>[0], 'upstream'>): Promise<LinkEmulator> {
  const emulator = await startLinkEmulator({ upstream: upstream.url, ...options });
  emulators.push(emulator);
  return emulator;
}

function recordsOf(emulator: LinkEmulator): RequestRecord[] {
  const records: RequestRecord[] = [];
  emulator.events.on('request', (record) => records.push(record));
  return records;
}

beforeEach(async () => {
  upstream = await startUpstream();
});

afterEach(async () => {
  await Promise.all(emulators.splice(0).map((emulator) => emulator.close()));
  await upstream.close();
});

describe('client addresses', () => {
  /** The address the upstream saw, for `count` requests each on a connection of its own. */
  async function peersSeen(emulator: LinkEmulator, count: number): Promise<string[]> {
    const seen: string[] = [];
    for (let i = 0; i < count; i += 1) {
      const agent = new http.Agent({ keepAlive: false });
      try {
        seen.push((await timedGet(`${emulator.url}/peer`, { agent })).body.toString());
      } finally {
        agent.destroy();
      }
    }
    return seen;
  }

  it('forwards every request from 127.0.0.1 by default', async () => {
    expect(await peersSeen(await emulate({ profile: { delayMs: 0 } }), 3)).toEqual(['127.0.0.1', '127.0.0.1', '127.0.0.1']);
  });

  it('with distinctClientAddresses, forwards each client connection from its own address of 127.0/16', async () => {
    const emulator = await emulate({ profile: { delayMs: 0 }, distinctClientAddresses: true });
    const seen = await peersSeen(emulator, 3);
    expect(new Set(seen).size).toBe(3);
    for (const address of seen) expect(address).toMatch(/^127\.0\.\d+\.\d+$/);
    // Requests of one kept-alive connection keep its address.
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    try {
      const first = await timedGet(`${emulator.url}/peer`, { agent });
      const second = await timedGet(`${emulator.url}/peer`, { agent });
      expect(second.reusedSocket).toBe(true);
      expect(second.body.toString()).toBe(first.body.toString());
    } finally {
      agent.destroy();
    }
  });
});

describe('delay', () => {
  it('holds every response head back by at least the configured round-trip delay', async () => {
    const emulator = await emulate({ profile: { delayMs: 300 } });
    const response = await timedGet(`${emulator.url}/bytes/512`);
    expect(response.status).toBe(200);
    expect(response.body.length).toBe(512);
    expect(response.firstByteMs).toBeGreaterThanOrEqual(300);
  });

  it('delays each request on a kept-alive connection, not only the connection setup', async () => {
    const emulator = await emulate({ profile: { delayMs: 200 } });
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    try {
      const first = await timedGet(`${emulator.url}/bytes/100`, { agent });
      const second = await timedGet(`${emulator.url}/bytes/100`, { agent });
      expect(second.reusedSocket).toBe(true);
      expect(first.firstByteMs).toBeGreaterThanOrEqual(200);
      expect(second.firstByteMs).toBeGreaterThanOrEqual(200);
    } finally {
      agent.destroy();
    }
  });

  it('draws the same sequence of delays from the same seed, and another from another seed', async () => {
    const profile = { delayMs: { distribution: 'lognormal' as const, meanMs: 20, stdDevMs: 10 } };
    const runs: number[][] = [];
    for (const seed of [7, 7, 8]) {
      const emulator = await emulate({ profile, seed });
      const records = recordsOf(emulator);
      for (let i = 0; i < 5; i++) await timedGet(`${emulator.url}/bytes/10`);
      await waitFor(() => records.length === 5);
      runs.push(records.map((record) => record.plan!.delayMs));
    }
    expect(runs[0]).toEqual(runs[1]);
    expect(runs[2]).not.toEqual(runs[0]);
    expect(new Set(runs[0]).size).toBe(5); // jitter: the delays really vary
  });

  it('reports the drawn plan and measured times of each request', async () => {
    const emulator = await emulate({ profile: { delayMs: 120 } });
    const records = recordsOf(emulator);
    await timedGet(`${emulator.url}/bytes/2048`);
    await waitFor(() => records.length === 1);
    const [record] = records;
    expect(record).toMatchObject({ index: 0, server: 'link', method: 'GET', url: '/bytes/2048', outcome: 'ok', status: 200, bodyBytes: 2048 });
    expect(record!.plan!.delayMs).toBe(120);
    expect(record!.firstByteMs).toBeGreaterThanOrEqual(120);
    expect(emulator.stats()).toMatchObject({ requests: 1, served: 1, bodyBytes: 2048 });
    expect(record).not.toHaveProperty('range');
  });

  it('records the Range header of a request (a client resuming a body)', async () => {
    const emulator = await emulate({ profile: { delayMs: 0 } });
    const records = recordsOf(emulator);
    await fetch(`${emulator.url}/bytes/2048`, { headers: { range: 'bytes=1000-' } }).then((response) => response.arrayBuffer());
    await waitFor(() => records.length === 1);
    expect(records[0]).toMatchObject({ method: 'GET', range: 'bytes=1000-' });
  });
});

describe('bandwidth and stalls', () => {
  it('throttles the response body to the configured bytes per second, intact', async () => {
    const emulator = await emulate({ profile: { delayMs: 0, bandwidthBytesPerSec: 200_000 } });
    const response = await timedGet(`${emulator.url}/bytes/100000`);
    expect(response.body.equals(Buffer.alloc(100_000, 'x'))).toBe(true);
    expect(response.headers['content-length']).toBe('100000');
    // 100 000 bytes at 200 000 B/s cannot finish in less than 500 ms.
    expect(response.completeMs).toBeGreaterThanOrEqual(500);
  });

  it('shares one link among concurrent responses under linkSharing "shared": two 100 KB bodies at 500 kB/s take twice as long as one', async () => {
    const scenario: Scenario = { formatVersion: 1, name: 'shared', durationMs: 60_000, servers: { A: { link: { delayMs: 0, bandwidthBytesPerSec: 500_000 }, linkSharing: 'shared' } } };
    const emulator = await emulate({ scenario });
    const [first, second] = await Promise.all([timedGet(`${emulator.url}/bytes/100000`), timedGet(`${emulator.url}/bytes/100000`)]);
    expect(first.body.length).toBe(100_000);
    expect(second.body.length).toBe(100_000);
    // 200 000 bytes cross one 500 000 B/s link: the later of the two cannot end before 400 ms (alone, one takes 200 ms).
    expect(Math.max(first.completeMs, second.completeMs)).toBeGreaterThanOrEqual(400);
  });

  it('throttles bodies without a Content-Length too', async () => {
    const emulator = await emulate({ profile: { delayMs: 0, bandwidthBytesPerSec: 100_000 } });
    const response = await timedGet(`${emulator.url}/chunked/30000`);
    expect(response.body.length).toBe(30_000);
    expect(response.completeMs).toBeGreaterThanOrEqual(300);
  });

  it('stalls the first byte of a request that draws a stall', async () => {
    const emulator = await emulate({ profile: { delayMs: 50, stall: { probability: 1, durationMs: 400 } } });
    const response = await timedGet(`${emulator.url}/bytes/10`);
    expect(response.firstByteMs).toBeGreaterThanOrEqual(450);
  });

  it('stalls part-way through the body for phase "body"', async () => {
    const emulator = await emulate({ profile: { delayMs: 0, stall: { probability: 1, durationMs: 400, phase: 'body' } } });
    const records = recordsOf(emulator);
    const response = await timedGet(`${emulator.url}/bytes/50000`);
    await waitFor(() => records.length === 1);
    expect(response.body.length).toBe(50_000);
    expect(response.completeMs).toBeGreaterThanOrEqual(400);
    expect(records[0]!.plan).toMatchObject({ stallMs: 400, stallPhase: 'body' });
  });
});

describe('brownouts', () => {
  it('answers the shed share of requests with the brownout\'s quick 5xx after the round trip, and the rest from upstream', async () => {
    const scenario: Scenario = {
      formatVersion: 1,
      name: 'brownout',
      durationMs: 60_000,
      servers: { A: { link: { delayMs: 100 }, brownouts: [{ fromMs: 0, toMs: 60_000, errorProbability: 0.5, status: 502 }] } },
    };
    const emulator = await emulate({ scenario });
    const responses = [];
    for (let i = 0; i < 16; i++) responses.push(await timedGet(`${emulator.url}/bytes/64`));
    const shed = responses.filter((response) => response.status === 502);
    const served = responses.filter((response) => response.status === 200);
    expect(shed.length).toBeGreaterThan(0);
    expect(served.length).toBeGreaterThan(0);
    expect(shed.length + served.length).toBe(16);
    for (const response of shed) {
      expect(response.body.length).toBe(0);
      expect(response.firstByteMs).toBeGreaterThanOrEqual(100);
    }
    for (const response of served) expect(response.body.length).toBe(64);
  });

  it('sheds nothing while the link is forced up (setOutage(null)), and sheds again once the override is cleared', async () => {
    const scenario: Scenario = {
      formatVersion: 1,
      name: 'brownout',
      durationMs: 60_000,
      servers: { A: { link: { delayMs: 0 }, brownouts: [{ fromMs: 0, toMs: 60_000, errorProbability: 1, status: 503 }] } },
    };
    const emulator = await emulate({ scenario });
    // A harness sets its pages up with every link forced up (e2e/bench/evaluation/cluster.ts).
    emulator.setOutage(null);
    for (let i = 0; i < 4; i++) expect((await timedGet(`${emulator.url}/bytes/16`)).status).toBe(200);
    emulator.clearOverrides();
    expect((await timedGet(`${emulator.url}/bytes/16`)).status).toBe(503);
  });
});

describe('outages', () => {
  it('"reset" resets connections; the link works again once the outage is lifted', async () => {
    const emulator = await emulate({ profile: { delayMs: 0 } });
    emulator.setOutage('reset');
    expect(await outcomeOf(timedGet(`${emulator.url}/bytes/10`))).toBe('ECONNRESET');
    emulator.setOutage(null);
    expect(await outcomeOf(timedGet(`${emulator.url}/bytes/10`))).toBe('ok');
  });

  it('"refuse" closes the port (ECONNREFUSED) and binds the same port again afterwards', async () => {
    const emulator = await emulate({ profile: { delayMs: 0 } });
    const port = emulator.port;
    emulator.setOutage('refuse');
    await waitFor(async () => (await outcomeOf(timedGet(`${emulator.url}/bytes/10`))) === 'ECONNREFUSED');
    emulator.setOutage(null);
    await waitFor(async () => (await outcomeOf(timedGet(`${emulator.url}/bytes/10`))) === 'ok');
    expect(emulator.port).toBe(port);
  });

  it('"hang" accepts but never answers, and resets the hung requests when it ends', async () => {
    const emulator = await emulate({ profile: { delayMs: 0 } });
    emulator.setOutage('hang');
    expect(await outcomeOf(timedGet(`${emulator.url}/bytes/10`, { headTimeoutMs: 300 }))).toBe('TIMEOUT');
    const hung = outcomeOf(timedGet(`${emulator.url}/bytes/10`));
    await waitFor(() => emulator.stats().hung >= 2);
    emulator.setOutage(null);
    expect(await hung).toBe('ECONNRESET');
    expect(await outcomeOf(timedGet(`${emulator.url}/bytes/10`))).toBe('ok');
  });

  it('cuts off a response in flight when an outage starts', async () => {
    const emulator = await emulate({ profile: { delayMs: 0, bandwidthBytesPerSec: 50_000 } });
    const records = recordsOf(emulator);
    const slow = outcomeOf(timedGet(`${emulator.url}/bytes/200000`)); // 4 s at 50 kB/s
    await waitFor(() => emulator.stats().requests === 1);
    emulator.setOutage('reset');
    expect(await slow).toBe('ECONNRESET');
    await waitFor(() => records.length === 1);
    expect(records[0]!.outcome).toBe('reset');
  });

  it('follows the scenario\'s outage windows on the shared timeline', async () => {
    const scenario: Scenario = {
      formatVersion: 1,
      name: 'blip',
      durationMs: 1000,
      servers: { A: { link: { delayMs: 0 }, outages: [{ fromMs: 0, toMs: 2000, mode: 'reset' }] } },
    };
    const timeline = new Timeline();
    const emulator = await emulate({ scenario, timeline });
    const outages: Array<string | null> = [];
    emulator.events.on('outage', (event) => outages.push(event.current));
    timeline.restart();
    expect(emulator.currentOutage()).toBe('reset');
    expect(await outcomeOf(timedGet(`${emulator.url}/bytes/10`))).toBe('ECONNRESET');
    await waitFor(() => emulator.currentOutage() === null);
    expect(await outcomeOf(timedGet(`${emulator.url}/bytes/10`))).toBe('ok');
    expect(outages).toContain(null);
  });
});

describe('runtime control', () => {
  it('setDelay, setBandwidth and setStall override the schedule until clearOverrides()', async () => {
    const emulator = await emulate({ profile: { delayMs: 10 } });
    const records = recordsOf(emulator);
    emulator.setDelay(250);
    emulator.setBandwidth(1_000_000);
    emulator.setStall({ probability: 0, durationMs: 5 });
    expect(emulator.currentLink()).toEqual({ delayMs: 250, bandwidthBytesPerSec: 1_000_000, stall: { probability: 0, durationMs: 5 } });
    const slowed = await timedGet(`${emulator.url}/bytes/10`);
    expect(slowed.firstByteMs).toBeGreaterThanOrEqual(250);
    emulator.clearOverrides();
    await timedGet(`${emulator.url}/bytes/10`);
    await waitFor(() => records.length === 2);
    expect(records.map((record) => record.plan!.delayMs)).toEqual([250, 10]);
  });

  it('rejects invalid runtime values with WEBPP_ERR_NETEM_OPTIONS', async () => {
    const emulator = await emulate({ profile: { delayMs: 10 } });
    expect(() => emulator.setDelay(-5)).toThrow(expect.objectContaining({ code: 'WEBPP_ERR_NETEM_OPTIONS' }));
    expect(() => emulator.setBandwidth(0)).toThrow(NetemError);
    expect(() => emulator.setOutage('explode' as never)).toThrow(/outage/);
  });
});

describe('proxying', () => {
  it('keeps the client\'s Host header (a.localhost:PORT) by default, or rewrites it', async () => {
    const kept = await emulate({ profile: { delayMs: 0 } });
    const host = `a.localhost:${kept.port}`;
    const response = await timedGet(`${kept.url}/host`, { headers: { host } });
    expect(response.body.toString()).toBe(host);
    const rewritten = await emulate({ profile: { delayMs: 0 }, preserveHost: false });
    const other = await timedGet(`${rewritten.url}/host`, { headers: { host } });
    expect(other.body.toString()).toBe(new URL(upstream.url).host);
  });

  it('passes status, end-to-end headers and HEAD responses through', async () => {
    const emulator = await emulate({ profile: { delayMs: 0 } });
    const missing = await timedGet(`${emulator.url}/nothing`);
    expect(missing.status).toBe(404);
    const head = await timedGet(`${emulator.url}/bytes/777`, { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(head.headers['content-length']).toBe('777');
    expect(head.headers['x-upstream']).toBe('yes');
    expect(head.body.length).toBe(0);
  });

  it('passes protocol upgrades through after one round trip', async () => {
    const emulator = await emulate({ profile: { delayMs: 150 } });
    const startMs = performance.now();
    const echoed = await new Promise<{ status: number; data: string; handshakeMs: number }>((resolve, reject) => {
      const req = http.request(`${emulator.url}/socket`, { headers: { connection: 'Upgrade', upgrade: 'echo' }, agent: false });
      req.on('upgrade', (res, socket) => {
        const handshakeMs = performance.now() - startMs;
        socket.once('data', (chunk: Buffer) => {
          socket.destroy();
          resolve({ status: res.statusCode ?? 0, data: chunk.toString(), handshakeMs });
        });
        socket.write('ping');
      });
      req.on('error', reject);
      req.end();
    });
    expect(echoed).toMatchObject({ status: 101, data: 'ping' });
    expect(echoed.handshakeMs).toBeGreaterThanOrEqual(150);
  });

  it('makes an unreachable upstream look like a dead server (connection reset)', async () => {
    const emulator = await emulate({ profile: { delayMs: 0 } });
    await upstream.close();
    expect(await outcomeOf(timedGet(`${emulator.url}/bytes/10`))).toBe('ECONNRESET');
    upstream = await startUpstream(); // for afterEach
  });
});

describe('options', () => {
  it('refuses non-loopback upstreams and listen hosts', async () => {
    await expect(startLinkEmulator({ upstream: 'http://example.com', profile: { delayMs: 0 } })).rejects.toMatchObject({
      code: 'WEBPP_ERR_NETEM_NOT_LOOPBACK',
    });
    await expect(startLinkEmulator({ upstream: upstream.url, profile: { delayMs: 0 }, host: '0.0.0.0' })).rejects.toMatchObject({
      code: 'WEBPP_ERR_NETEM_NOT_LOOPBACK',
    });
  });

  it('needs exactly one of profile and scenario, and a server for multi-server scenarios', async () => {
    await expect(startLinkEmulator({ upstream: upstream.url })).rejects.toMatchObject({ code: 'WEBPP_ERR_NETEM_OPTIONS' });
    const scenario = {
      formatVersion: 1,
      name: 'two',
      durationMs: 10,
      servers: { A: { link: { delayMs: 1 } }, B: { link: { delayMs: 2 } } },
    };
    await expect(startLinkEmulator({ upstream: upstream.url, scenario })).rejects.toThrow(/pick one with `server`/);
    await expect(startLinkEmulator({ upstream: upstream.url, scenario, server: 'Z' })).rejects.toThrow(/no server "Z"/);
  });
});

describe('startScenarioEmulators', () => {
  it('puts every server of a scenario behind its own port on one timeline', async () => {
    const scenario: Scenario = {
      formatVersion: 1,
      name: 'trio',
      durationMs: 1000,
      servers: { A: { link: { delayMs: 150 } }, B: { link: { delayMs: 0 } }, C: { link: { delayMs: 0 }, outages: [{ fromMs: 0, toMs: 60_000 }] } },
    };
    const set = await startScenarioEmulators({ scenario, upstreams: { A: upstream.url, B: upstream.url, C: upstream.url } });
    try {
      const ports = Object.values(set.emulators).map((emulator) => emulator.port);
      expect(new Set(ports).size).toBe(3);
      expect(Object.values(set.emulators).every((emulator) => emulator.timeline === set.timeline)).toBe(true);
      const a = await timedGet(`${set.emulators['A']!.url}/bytes/10`);
      expect(a.firstByteMs).toBeGreaterThanOrEqual(150);
      expect(await outcomeOf(timedGet(`${set.emulators['B']!.url}/bytes/10`))).toBe('ok');
      expect(await outcomeOf(timedGet(`${set.emulators['C']!.url}/bytes/10`))).toBe('ECONNRESET');
    } finally {
      await set.close();
    }
    await expect(startScenarioEmulators({ scenario, upstreams: { A: upstream.url } })).rejects.toThrow(/no upstream for server\(s\) B, C/);
  });
});
