import { PAPER_DEFAULTS, resolveSelectionConfig } from './config.js';
import {
  MIN_SAMPLES_FOR_TIMEOUT,
  clamp,
  effectiveSampleCount,
  foldSample,
  latencyPercentileMs,
  percentileOfMeanMs,
} from './latency-estimate.js';
import { percentileToZ } from './normal-quantile.js';
import type { Clock, LatencyTableJSON, SelectionConfig, ServerEstimate, ServerId } from './types.js';

/**
 * The latency table of the extended Refresh algorithm (Web++ paper, Section 4.1): one row
 * per server with its EWMA latency estimate and its available/failed state. Plain JSON in,
 * plain JSON out, so it can live in IndexedDB and be merged row by row.
 */
export class LatencyTable {
  readonly config: Readonly<Required<SelectionConfig>>;
  private readonly clock: Clock;
  private readonly rows = new Map<ServerId, ServerEstimate>();
  private readonly selectZ: number;
  private readonly timeoutZ: number;
  private readonly failedListeners = new Set<(server: ServerId) => void>();

  constructor(config: SelectionConfig, clock: Clock = Date.now) {
    this.config = Object.freeze(resolveSelectionConfig(config, PAPER_DEFAULTS));
    this.clock = clock;
    this.selectZ = percentileToZ(this.config.selectPercentile);
    this.timeoutZ = percentileToZ(this.config.timeoutPercentile);
  }

  /** Builds a table from stored JSON. Tolerant: malformed rows are dropped; never throws on data. */
  static fromJSON(json: unknown, config: SelectionConfig, clock: Clock = Date.now): LatencyTable {
    const table = new LatencyTable(config, clock);
    table.mergeFrom(json);
    return table;
  }

  toJSON(): LatencyTableJSON {
    const servers: Record<ServerId, ServerEstimate> = {};
    for (const [server, row] of this.rows) {
      // defineProperty: a server named "__proto__" must stay an ordinary key.
      Object.defineProperty(servers, server, { value: { ...row }, enumerable: true, writable: true, configurable: true });
    }
    return { formatVersion: 1, servers };
  }

  get(server: ServerId): ServerEstimate | undefined {
    const row = this.rows.get(server);
    return row && { ...row };
  }

  servers(): ServerId[] {
    return [...this.rows.keys()];
  }

  /** The table's clock reading. */
  now(): number {
    return this.clock();
  }

  get size(): number {
    return this.rows.size;
  }

  /** Forgets a server. */
  delete(server: ServerId): boolean {
    return this.rows.delete(server);
  }

  /**
   * Folds a time-to-first-byte sample into the server's estimate (eq. (2) and (3)). A
   * response means the server is alive: it becomes `available` and F is reset (Figure 4).
   * @throws RangeError unless latencyMs is a finite number >= 0.
   */
  recordSample(server: ServerId, latencyMs: number): ServerEstimate {
    if (!(Number.isFinite(latencyMs) && latencyMs >= 0)) {
      throw new RangeError(`latencyMs must be a finite number >= 0 (got ${latencyMs})`);
    }
    const now = this.clock();
    const row = this.row(server);
    const moments = foldSample(row, latencyMs, this.config.ewmaWeight);
    return this.put({
      ...row,
      ...moments,
      lastSampleAtMs: now,
      state: 'available',
      probeIntervalMs: this.config.probeIntervalMs,
      nextProbeAtMs: 0,
      updatedAtMs: now,
    });
  }

  /**
   * Marks a server failed after a timeout or network error (Figure 4). Its first probe is
   * due F after now; a server that was already failed keeps its current (doubled) F.
   */
  markFailed(server: ServerId): ServerEstimate {
    const now = this.clock();
    const row = this.row(server);
    const probeIntervalMs = row.state === 'failed' ? row.probeIntervalMs : this.config.probeIntervalMs;
    const marked = this.put({ ...row, state: 'failed', probeIntervalMs, nextProbeAtMs: now + probeIntervalMs, updatedAtMs: now });
    for (const listener of [...this.failedListeners]) listener(server);
    return marked;
  }

  /**
   * Calls `listener` every time a server is marked failed (markFailed), so that a request
   * still waiting on that server can fail over at once. Returns unsubscribe.
   */
  onServerFailed(listener: (server: ServerId) => void): () => void {
    this.failedListeners.add(listener);
    return () => void this.failedListeners.delete(listener);
  }

  /**
   * Records that an asynchronous probe was just sent to a failed server: F doubles (capped
   * at maxProbeIntervalMs) and the next probe is due F after now (Figure 4). A response to
   * the probe is reported with recordSample, which resets F. No-op for available servers.
   */
  recordProbeSent(server: ServerId): ServerEstimate {
    const row = this.row(server);
    if (row.state !== 'failed') return { ...row };
    const now = this.clock();
    const probeIntervalMs = Math.min(row.probeIntervalMs * 2, this.config.maxProbeIntervalMs);
    return this.put({ ...row, probeIntervalMs, nextProbeAtMs: now + probeIntervalMs, updatedAtMs: now });
  }

  /** True when the server has no sample younger than TTL (unknown servers are expired). */
  isExpired(server: ServerId): boolean {
    const row = this.rows.get(server);
    if (!row || row.sampleCount === 0) return true;
    return this.clock() - row.lastSampleAtMs > this.config.ttlMs;
  }

  isFailed(server: ServerId): boolean {
    return this.rows.get(server)?.state === 'failed';
  }

  /**
   * Eq. (1): the S-percentile avg + c_S·sqrt(var)/sqrt(n), with n = min(sampleCount, m of
   * eq. (5)) (docs/selection.md). +Infinity for a server without samples.
   */
  sPercentileMs(server: ServerId): number {
    const row = this.rows.get(server);
    if (!row || row.sampleCount === 0) return Infinity;
    const n = effectiveSampleCount(row.sampleCount, this.config.ewmaWeight);
    return percentileOfMeanMs(row.meanMs, row.varianceMs2, n, this.selectZ);
  }

  /**
   * The request timeout (Figure 4): the T-percentile of one request's latency,
   * avg + c_T·sqrt(var), raised to at least max(timeoutFloorMs, timeoutMeanMultiple·avg)
   * and capped at timeoutCeilingMs; initialTimeoutMs while the server has fewer than
   * MIN_SAMPLES_FOR_TIMEOUT samples. Whole milliseconds.
   */
  timeoutMs(server: ServerId): number {
    const row = this.rows.get(server);
    const { timeoutFloorMs, timeoutMeanMultiple, timeoutCeilingMs, initialTimeoutMs } = this.config;
    if (!row || row.sampleCount < MIN_SAMPLES_FOR_TIMEOUT) return initialTimeoutMs;
    const percentileMs = latencyPercentileMs(row.meanMs, row.varianceMs2, this.timeoutZ);
    const floorMs = Math.max(timeoutFloorMs, timeoutMeanMultiple * row.meanMs);
    return Math.round(clamp(percentileMs, Math.min(floorMs, timeoutCeilingMs), timeoutCeilingMs));
  }

  /**
   * Merges rows from another copy of the table (e.g. IndexedDB written by another tab):
   * row by row, the newer updatedAtMs wins; ties are broken deterministically, so merging
   * is commutative, associative and idempotent. Malformed input rows are ignored.
   */
  mergeFrom(json: unknown): void {
    if (!isRecord(json) || json.formatVersion !== 1 || !isRecord(json.servers)) return;
    for (const [server, candidate] of Object.entries(json.servers)) {
      const row = this.normaliseRow(server, candidate);
      if (!row) continue;
      const current = this.rows.get(server);
      if (!current || compareRows(row, current) > 0) this.rows.set(server, row);
    }
  }

  private row(server: ServerId): ServerEstimate {
    if (typeof server !== 'string' || server.length === 0) throw new TypeError('server must be a non-empty string');
    return (
      this.rows.get(server) ?? {
        server,
        meanMs: 0,
        varianceMs2: 0,
        sampleCount: 0,
        lastSampleAtMs: 0,
        state: 'available',
        probeIntervalMs: this.config.probeIntervalMs,
        nextProbeAtMs: 0,
        updatedAtMs: 0,
      }
    );
  }

  private put(row: ServerEstimate): ServerEstimate {
    this.rows.set(row.server, row);
    return { ...row };
  }

  /** A valid row, with F clamped into this config's [probeIntervalMs, maxProbeIntervalMs]; else undefined. */
  private normaliseRow(server: string, value: unknown): ServerEstimate | undefined {
    if (!isRecord(value) || value.server !== server || server.length === 0) return undefined;
    const { meanMs, varianceMs2, sampleCount, lastSampleAtMs, state, probeIntervalMs, nextProbeAtMs, updatedAtMs } =
      value;
    if (!isNonNegative(meanMs) || !isNonNegative(varianceMs2) || !isNonNegative(lastSampleAtMs)) return undefined;
    if (!isNonNegative(nextProbeAtMs) || !isNonNegative(updatedAtMs)) return undefined;
    if (!isNonNegative(sampleCount) || !Number.isInteger(sampleCount)) return undefined;
    if (state !== 'available' && state !== 'failed') return undefined;
    if (!isNonNegative(probeIntervalMs) || probeIntervalMs === 0) return undefined;
    return {
      server,
      meanMs,
      varianceMs2,
      sampleCount,
      lastSampleAtMs,
      state,
      probeIntervalMs: clamp(probeIntervalMs, this.config.probeIntervalMs, this.config.maxProbeIntervalMs),
      nextProbeAtMs: state === 'failed' ? nextProbeAtMs : 0,
      updatedAtMs,
    };
  }
}

const ROW_KEYS = [
  'updatedAtMs',
  'sampleCount',
  'lastSampleAtMs',
  'meanMs',
  'varianceMs2',
  'probeIntervalMs',
  'nextProbeAtMs',
] as const;

/** Total order on rows: newer updatedAtMs first, then a fixed field-by-field tie-break. */
function compareRows(a: ServerEstimate, b: ServerEstimate): number {
  for (const key of ROW_KEYS) {
    if (a[key] !== b[key]) return a[key] > b[key] ? 1 : -1;
  }
  if (a.state !== b.state) return a.state === 'failed' ? 1 : -1;
  return 0;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isNonNegative(value: unknown): value is number {
  return typeof value === 'number' && Number.isFinite(value) && value >= 0;
}
