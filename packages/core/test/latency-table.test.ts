import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  FAST_PRESET,
  LatencyTable,
  PAPER_DEFAULTS,
  resolveSelectionConfig,
  type LatencyTableJSON,
  type ServerEstimate,
} from '@webpp/core';
import { FakeClock } from './fake-clock.js';

const A = 'http://a.localhost:8081';
const B = 'http://b.localhost:8082';

/** r = 0.5 gives a variance large enough to see; bounds wide enough not to clamp. */
const WORKED = resolveSelectionConfig(
  { ewmaWeight: 0.5, timeoutFloorMs: 1, timeoutMeanMultiple: 0, timeoutCeilingMs: 100_000, initialTimeoutMs: 3_000 },
  FAST_PRESET,
);

describe('LatencyTable estimates', () => {
  it('folds samples with eq. (2) and (3) and derives eq. (1) and the timeout (r = 0.5)', () => {
    const clock = new FakeClock();
    const table = new LatencyTable(WORKED, clock.now);
    table.recordSample(A, 100);
    table.recordSample(A, 200);
    const row = table.recordSample(A, 100);
    expect(row).toMatchObject({ meanMs: 125, varianceMs2: 937.5, sampleCount: 3, lastSampleAtMs: clock.nowMs });
    // n = min(3, m = 7): 125 + 0.125661·sqrt(937.5)/sqrt(3)
    expect(table.sPercentileMs(A)).toBeCloseTo(127.2214, 4);
    // 125 + 3.090232·sqrt(937.5) = 219.62 → 220
    expect(table.timeoutMs(A)).toBe(220);
  });

  it('with the paper r = 0.95, n is capped at m = 2 samples', () => {
    const table = new LatencyTable({ ...PAPER_DEFAULTS, timeoutFloorMs: 1, timeoutMeanMultiple: 0 }, new FakeClock().now);
    for (const sample of [100, 200, 100]) table.recordSample(A, sample);
    // mean 100 → 195 → 104.75; variance 0 → 23.75 → 0.05·23.75 + 0.95·4.75² = 22.621875
    expect(table.get(A)?.meanMs).toBeCloseTo(104.75, 10);
    expect(table.get(A)?.varianceMs2).toBeCloseTo(22.621875, 10);
    expect(table.sPercentileMs(A)).toBeCloseTo(105.1726, 4);
    // 104.75 + 3.090232·4.7562 = 119.45
    expect(table.timeoutMs(A)).toBe(119);
  });

  it('clamps the timeout to [floor, ceiling] and uses initialTimeoutMs before 2 samples', () => {
    const table = new LatencyTable(FAST_PRESET, new FakeClock().now);
    expect(table.timeoutMs(A)).toBe(FAST_PRESET.initialTimeoutMs);
    table.recordSample(A, 3);
    expect(table.timeoutMs(A)).toBe(FAST_PRESET.initialTimeoutMs);
    table.recordSample(A, 4);
    expect(table.timeoutMs(A)).toBe(FAST_PRESET.timeoutFloorMs);
    table.recordSample(B, 60_000);
    table.recordSample(B, 90_000);
    expect(table.timeoutMs(B)).toBe(FAST_PRESET.timeoutCeilingMs);
  });

  it('never times out sooner than timeoutMeanMultiple × mean', () => {
    // Paper r = 0.95: samples 900, 1000 give mean 995 and variance 0.95·5² = 23.75, so the
    // T-percentile is only 995 + 3.09·4.87 = 1010 ms; the relative floor lifts it to 2·995.
    const table = new LatencyTable({ ...PAPER_DEFAULTS, timeoutMeanMultiple: 2 }, new FakeClock().now);
    table.recordSample(A, 900);
    table.recordSample(A, 1000);
    expect(table.timeoutMs(A)).toBe(1990);
    const pure = new LatencyTable({ ...PAPER_DEFAULTS, timeoutMeanMultiple: 0 }, new FakeClock().now);
    pure.recordSample(A, 900);
    pure.recordSample(A, 1000);
    expect(pure.timeoutMs(A)).toBe(1010);
  });

  it('ranks an unsampled server as +Infinity', () => {
    const table = new LatencyTable(FAST_PRESET);
    expect(table.sPercentileMs(A)).toBe(Infinity);
  });

  it('rejects impossible samples', () => {
    const table = new LatencyTable(FAST_PRESET);
    for (const bad of [-1, Number.NaN, Infinity]) expect(() => table.recordSample(A, bad)).toThrow(RangeError);
    expect(() => table.recordSample('', 5)).toThrow(TypeError);
  });

  it('validates its config', () => {
    expect(() => new LatencyTable({ ...PAPER_DEFAULTS, ttlMs: -5 })).toThrow(/ttlMs/);
  });
});

describe('LatencyTable TTL and failure state', () => {
  it('expires an entry strictly after TTL', () => {
    const clock = new FakeClock();
    const table = new LatencyTable(FAST_PRESET, clock.now);
    expect(table.isExpired(A)).toBe(true);
    table.recordSample(A, 10);
    clock.advance(FAST_PRESET.ttlMs);
    expect(table.isExpired(A)).toBe(false);
    clock.advance(1);
    expect(table.isExpired(A)).toBe(true);
    table.recordSample(A, 10);
    expect(table.isExpired(A)).toBe(false);
  });

  it('doubles F on every probe, caps it, and resets it on a response', () => {
    const clock = new FakeClock();
    const config = resolveSelectionConfig({ probeIntervalMs: 1_000, maxProbeIntervalMs: 5_000 }, FAST_PRESET);
    const table = new LatencyTable(config, clock.now);
    table.recordSample(A, 10);
    const failedAt = clock.nowMs;
    expect(table.markFailed(A)).toMatchObject({ state: 'failed', probeIntervalMs: 1_000, nextProbeAtMs: failedAt + 1_000 });

    const intervals: number[] = [];
    for (let i = 0; i < 5; i++) {
      clock.nowMs = table.get(A)!.nextProbeAtMs;
      const row = table.recordProbeSent(A);
      intervals.push(row.probeIntervalMs);
      expect(row.nextProbeAtMs).toBe(clock.nowMs + row.probeIntervalMs);
    }
    expect(intervals).toEqual([2_000, 4_000, 5_000, 5_000, 5_000]);

    clock.advance(100);
    expect(table.recordSample(A, 12)).toMatchObject({ state: 'available', probeIntervalMs: 1_000, nextProbeAtMs: 0 });
  });

  it('a failure of an already failed server keeps its backed-off F', () => {
    const clock = new FakeClock();
    const table = new LatencyTable(FAST_PRESET, clock.now);
    table.markFailed(A);
    table.recordProbeSent(A);
    clock.advance(10);
    expect(table.markFailed(A)).toMatchObject({ probeIntervalMs: 2 * FAST_PRESET.probeIntervalMs, nextProbeAtMs: clock.nowMs + 4_000 });
  });

  it('a probe record on an available server changes nothing', () => {
    const table = new LatencyTable(FAST_PRESET, new FakeClock().now);
    const before = table.recordSample(A, 5);
    expect(table.recordProbeSent(A)).toEqual(before);
  });
});

describe('LatencyTable JSON', () => {
  it('round-trips through JSON text', () => {
    const clock = new FakeClock();
    const table = new LatencyTable(FAST_PRESET, clock.now);
    table.recordSample(A, 10);
    table.recordSample(A, 30);
    table.markFailed(B);
    const copy = LatencyTable.fromJSON(JSON.parse(JSON.stringify(table)), FAST_PRESET, clock.now);
    expect(copy.toJSON()).toEqual(table.toJSON());
    expect(copy.sPercentileMs(A)).toBe(table.sPercentileMs(A));
  });

  it('drops malformed rows and never throws on bad data', () => {
    const good: ServerEstimate = {
      server: A,
      meanMs: 10,
      varianceMs2: 1,
      sampleCount: 2,
      lastSampleAtMs: 5,
      state: 'available',
      probeIntervalMs: FAST_PRESET.probeIntervalMs,
      nextProbeAtMs: 0,
      updatedAtMs: 5,
    };
    const json = {
      formatVersion: 1,
      servers: {
        [A]: good,
        [B]: { ...good, server: B, meanMs: -1 },
        'http://c': { ...good, server: 'http://c', state: 'dead' },
        'http://d': { ...good, server: 'http://elsewhere' },
        'http://e': { ...good, server: 'http://e', sampleCount: 1.5 },
        'http://f': { ...good, server: 'http://f', updatedAtMs: '5' },
        'http://g': null,
      },
    };
    const table = LatencyTable.fromJSON(json, FAST_PRESET);
    expect(table.servers()).toEqual([A]);
    expect(table.get(A)).toEqual(good);
    for (const garbage of [null, 7, 'x', [], { formatVersion: 2, servers: { [A]: good } }, { formatVersion: 1 }]) {
      expect(LatencyTable.fromJSON(garbage, FAST_PRESET).size).toBe(0);
    }
  });

  it('clamps a stored F into the current config', () => {
    const table = new LatencyTable(PAPER_DEFAULTS, new FakeClock().now);
    table.markFailed(A);
    const fast = LatencyTable.fromJSON(table.toJSON(), FAST_PRESET);
    expect(fast.get(A)?.probeIntervalMs).toBe(FAST_PRESET.maxProbeIntervalMs);
  });

  it('keeps a server named __proto__ as an ordinary row', () => {
    const table = new LatencyTable(FAST_PRESET);
    table.recordSample('__proto__', 5);
    const copy = LatencyTable.fromJSON(JSON.parse(JSON.stringify(table.toJSON())), FAST_PRESET);
    expect(copy.servers()).toEqual(['__proto__']);
  });
});

describe('LatencyTable.mergeFrom', () => {
  it('takes each row from the copy that changed it last', () => {
    const clockA = new FakeClock(1_000);
    const clockB = new FakeClock(2_000);
    const tab1 = new LatencyTable(FAST_PRESET, clockA.now);
    const tab2 = new LatencyTable(FAST_PRESET, clockB.now);
    tab1.recordSample(A, 10); // t = 1000
    tab2.recordSample(A, 99); // t = 2000: newer
    tab2.recordSample(B, 50); // t = 2000
    clockA.nowMs = 3_000;
    tab1.markFailed(B); // t = 3000: newer
    tab1.mergeFrom(tab2.toJSON());
    expect(tab1.get(A)?.meanMs).toBe(99);
    expect(tab1.get(B)?.state).toBe('failed');
  });

  const rowArbitrary = (server: string) =>
    fc.record({
      server: fc.constant(server),
      meanMs: fc.double({ min: 0, max: 1e5, noNaN: true }),
      varianceMs2: fc.double({ min: 0, max: 1e6, noNaN: true }),
      sampleCount: fc.nat(50),
      lastSampleAtMs: fc.nat(1e6),
      state: fc.constantFrom('available' as const, 'failed' as const),
      probeIntervalMs: fc.integer({ min: 1, max: 1e6 }),
      nextProbeAtMs: fc.nat(1e6),
      updatedAtMs: fc.nat(20), // few distinct times: ties are common
    });
  const tableArbitrary = fc
    .subarray(['s1', 's2', 's3', 's4'])
    .chain((servers) => fc.tuple(...servers.map(rowArbitrary)))
    .map((rows): LatencyTableJSON => ({ formatVersion: 1, servers: Object.fromEntries(rows.map((row) => [row.server, row])) }));
  const load = (...jsons: LatencyTableJSON[]) => {
    const table = new LatencyTable(FAST_PRESET, () => 0);
    for (const json of jsons) table.mergeFrom(json);
    return sorted(table.toJSON());
  };
  const sorted = (json: LatencyTableJSON) => Object.entries(json.servers).sort(([a], [b]) => a.localeCompare(b));

  it('is commutative, associative and idempotent on rows', () => {
    fc.assert(
      fc.property(tableArbitrary, tableArbitrary, tableArbitrary, (x, y, z) => {
        expect(load(x, y)).toEqual(load(y, x));
        expect(load(x, y, z)).toEqual(load(z, y, x));
        expect(load(x, x)).toEqual(load(x));
        expect(load(x, y, x, y)).toEqual(load(x, y));
      }),
    );
  });

  it('never lets an older row replace a newer one', () => {
    fc.assert(
      fc.property(tableArbitrary, tableArbitrary, (x, y) => {
        const merged = Object.fromEntries(load(x, y));
        for (const [server, row] of Object.entries(merged)) {
          const times = [x.servers[server]?.updatedAtMs, y.servers[server]?.updatedAtMs].filter((t) => t !== undefined);
          expect(row.updatedAtMs).toBe(Math.max(...times));
        }
      }),
    );
  });
});
