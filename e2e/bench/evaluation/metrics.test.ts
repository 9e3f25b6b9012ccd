import { describe, expect, it } from 'vitest';
import type { RequestPlan } from '@webpp/netem';
import type { PageRecord } from './browser-run.js';
import type { PolicyTraffic, ServerSideRequest } from './cluster.js';
import { pageOverhead } from './metrics.js';

const plan = (delayMs: number): RequestPlan => ({ delayMs, bandwidthBytesPerSec: null, stallPhase: null, stallMs: 0, stallAfterFraction: 0 }) as unknown as RequestPlan;
const get = (server: string, sizeBytes: number, arrivedAtMs: number, delayMs: number): ServerSideRequest => ({
  server, method: 'GET', client: 0, sizeBytes, range: undefined, arrivedAtMs, outcome: 'ok', plan: plan(delayMs), bodyBytes: sizeBytes, completeMs: delayMs,
});
const record = (index: number, sizeBytes: number, startMs: number, responseMs: number): PageRecord => ({ client: 0, index, sizeBytes, startMs, responseMs, ok: true, error: null });

describe('pageOverhead (the optimal-complete page\'s time beyond its fastest link)', () => {
  it('takes each request\'s GETs by time and size, and leaves out a server that never got one (an outage)', () => {
    const traffic = {
      gets: new Map([[0, [get('A', 512, 10, 50), get('B', 512, 12, 80), get('A', 5120, 110, 60), get('C', 512, 300, 30), get('C', 512, 301, 20)]]]),
    } as unknown as PolicyTraffic;
    const samples = pageOverhead([record(0, 512, 0, 90), record(1, 5120, 100, 100), record(2, 512, 290, 45)], traffic);
    expect(samples).toEqual([
      { atMs: 0, firstByteMs: 40, bodyMs: 0 }, // fastest of A (50) and B (80)
      { atMs: 100, firstByteMs: 40, bodyMs: 0 }, // A only: B and C refused
      { atMs: 290, firstByteMs: 15, bodyMs: 0 }, // C's first GET of the request, not the later one
    ]);
  });
});
