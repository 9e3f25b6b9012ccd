/**
 * This server's access counts with aging, the default AccessCounts source. GOS (Chen, Wang,
 * Lau, Section 4.4, LFU-Aging): "the AGAC values … are halved at the end of a pre-set time
 * interval". Halving is applied lazily: a count remembers the aging period it was last
 * touched in and is shifted right by the periods that have passed since, so no timer runs.
 * The table is bounded (least recently touched keys are dropped, lru-cache), so a scan of
 * many one-time URLs cannot grow it without limit.
 */
import { LRUCache } from 'lru-cache';
import type { AccessCounts } from './types.js';

interface AgedCount {
  count: number;
  /** floor(nowMs / agingIntervalMs) when `count` was last written. */
  period: number;
}

export interface LocalAccessCountsOptions {
  /** Counts are halved at the end of every interval (GOS: "a pre-set time interval"). */
  agingIntervalMs: number;
  /** Keys tracked at most. */
  maxKeys: number;
}

export class LocalAccessCounts implements AccessCounts {
  private readonly counts: LRUCache<string, AgedCount>;

  constructor(private readonly options: LocalAccessCountsOptions) {
    this.counts = new LRUCache({ max: options.maxKeys });
  }

  record(key: string, nowMs: number): void {
    const period = this.periodAt(nowMs);
    this.counts.set(key, { count: this.aged(this.counts.get(key), period) + 1, period });
  }

  count(key: string, nowMs: number): number {
    return this.aged(this.counts.peek(key), this.periodAt(nowMs));
  }

  forget(key: string): void {
    this.counts.delete(key);
  }

  private periodAt(nowMs: number): number {
    return Math.floor(nowMs / this.options.agingIntervalMs);
  }

  /** GOS aging: halved once per elapsed interval (count / 2^periods, rounded down). */
  private aged(entry: AgedCount | undefined, period: number): number {
    if (entry === undefined) return 0;
    const periods = Math.max(0, period - entry.period);
    return periods >= 31 ? 0 : Math.floor(entry.count / 2 ** periods);
  }
}
