/**
 * Plain-JSON state of the webpp policy, for IndexedDB. Restoring validates every field:
 * stored state may be stale, from another version, or corrupt. A malformed server row is
 * left out (the server is simply unknown again), never thrown on; samples dated in the
 * future (a clock that jumped back) are dated now.
 */
import type {  } from '../../engine/policy-types.js';
import type { ServerId } from '../../types.js';
import type { SketchJSON } from './latency-sketch.js';
import type { WebppOptions } from './options.js';
import { ServerRecord } from './server-record.js';

export const SNAPSHOT_FORMAT_VERSION = 1;

/** Longest server id accepted (an origin). */
const MAX_SERVER_ID_LENGTH = 2_048;
/** Bucket indices beyond this are no latency (γ^1000 ms is years). */
const MAX_BUCKET_INDEX = 1_000;
/** Most servers restored. */
const MAX_SERVERS = 256;

interface ServerRowJSON {
  ttfb: SketchJSON;
  history: SketchJSON;
  throughput: { bytes: number; ms: number; atMs: number };
  state: 'available' | 'failed';
  failureStreak: number;
  probesSent: number;
  nextProbeAtMs: number;
  sampleCount: number;
  lastSampleAtMs: number;
  updatedAtMs: number;
}

export interface WebppSnapshot {
  formatVersion: typeof SNAPSHOT_FORMAT_VERSION;
  policy: 'webpp';
  servers: Record<ServerId, ServerRowJSON>;
}

export function toSnapshot(records: Iterable<ServerRecord>): WebppSnapshot {
  const servers: Record<ServerId, ServerRowJSON> = {};
  for (const record of records) {
    servers[record.server] = {
      ttfb: record.ttfb.toJSON(),
      history: record.history.toJSON(),
      throughput: record.throughput.toJSON(),
      state: record.state,
      failureStreak: record.failureStreak,
      probesSent: record.probesSent,
      nextProbeAtMs: record.nextProbeAtMs,
      sampleCount: record.sampleCount,
      lastSampleAtMs: record.lastSampleAtMs,
      updatedAtMs: record.updatedAtMs,
    };
  }
  return { formatVersion: SNAPSHOT_FORMAT_VERSION, policy: 'webpp', servers };
}

/**
 * Merges a stored snapshot into the records in memory (the worker's tabs and versions share
 * one stored state; sw/src/policy-store.ts restores before every write): per server, the
 * record changed last wins, memory on a tie; servers only one side knows are kept.
 */
export function mergeSnapshot(records: Map<ServerId, ServerRecord>, state: unknown, options: WebppOptions, nowMs: number): void {
  for (const [server, stored] of fromSnapshot(state, options, nowMs)) {
    const current = records.get(server);
    if (current === undefined || stored.updatedAtMs > current.updatedAtMs) records.set(server, stored);
  }
}

/** The records of a snapshot, or an empty map when it is not one. */
function fromSnapshot(state: unknown, options: WebppOptions, nowMs: number): Map<ServerId, ServerRecord> {
  const records = new Map<ServerId, ServerRecord>();
  if (!isObject(state) || state['formatVersion'] !== SNAPSHOT_FORMAT_VERSION || state['policy'] !== 'webpp' || !isObject(state['servers'])) {
    return records;
  }
  for (const [server, row] of Object.entries(state['servers']).slice(0, MAX_SERVERS)) {
    if (server.length === 0 || server.length > MAX_SERVER_ID_LENGTH) continue;
    const record = recordFrom(server, row, options, nowMs);
    if (record !== undefined) records.set(server, record);
  }
  return records;
}

function recordFrom(server: ServerId, row: unknown, options: WebppOptions, nowMs: number): ServerRecord | undefined {
  if (!isObject(row) || !isObject(row['throughput'])) return undefined;
  const { throughput } = row;
  const numbers = [row['failureStreak'], row['probesSent'], row['nextProbeAtMs'], row['sampleCount'], row['lastSampleAtMs'], throughput['bytes'], throughput['ms'], throughput['atMs']];
  if (!numbers.every(isCount)) return undefined;
  if (row['state'] !== 'available' && row['state'] !== 'failed') return undefined;
  const ttfb = sketchFrom(row['ttfb'], nowMs);
  const history = sketchFrom(row['history'], nowMs);
  if (ttfb === undefined || history === undefined) return undefined;
  const record = new ServerRecord(server);
  record.ttfb.load(ttfb);
  record.history.load(history);
  record.throughput.load({ bytes: throughput['bytes'] as number, ms: throughput['ms'] as number, atMs: Math.min(throughput['atMs'] as number, nowMs) });
  record.state = row['state'];
  record.failureStreak = row['failureStreak'] as number;
  record.probesSent = Math.min(row['probesSent'] as number, 30);
  // A probe date far ahead (another configuration, a clock that jumped) waits no longer than the cap.
  record.nextProbeAtMs = Math.min(row['nextProbeAtMs'] as number, nowMs + options.probeBackoffCapMs);
  record.sampleCount = row['sampleCount'] as number;
  record.lastSampleAtMs = Math.min(row['lastSampleAtMs'] as number, nowMs);
  record.updatedAtMs = isCount(row['updatedAtMs']) ? Math.min(row['updatedAtMs'], nowMs) : record.lastSampleAtMs;
  return record;
}

/** A sketch's JSON with every bucket an integer index in a sane range and a finite weight > 0. */
function sketchFrom(value: unknown, nowMs: number): SketchJSON | undefined {
  if (!isObject(value) || !Array.isArray(value['buckets']) || !isCount(value['atMs'])) return undefined;
  const buckets: Array<[number, number]> = [];
  for (const bucket of value['buckets'] as unknown[]) {
    if (!Array.isArray(bucket) || bucket.length !== 2) return undefined;
    const [index, weight] = bucket as unknown[];
    if (typeof index !== 'number' || !Number.isInteger(index) || Math.abs(index) > MAX_BUCKET_INDEX) return undefined;
    if (!isCount(weight) || weight === 0) return undefined;
    buckets.push([index, weight]);
  }
  return { buckets, atMs: Math.min(value['atMs'], nowMs) };
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A finite number ≥ 0. */
function isCount(value: unknown): value is number {
  return typeof value === 'number' && Number.isFinite(value) && value >= 0;
}
