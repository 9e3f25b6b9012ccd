/**
 * Which objects are hot: those whose approximated global count is in the top `share` of the
 * counts this server knows (IBM's accelerator, Song et al. 2002, Section 3.2: "hot objects
 * … may have multiple owners"; GOS, Chen, Wang, Lau, Section 4.5: hot object replication).
 *
 * Relative, not an absolute count: an absolute count per aging interval means something
 * different at 10 and at 1,000 requests per second (at the one nothing is hot, at the other
 * everything is), and aging halves it every interval. The top share of the counts follows
 * the head of the popularity distribution whatever the request rate: under a Zipf workload
 * the top 10 % of the objects draw about half of the requests (α 0.8, 1,000 objects).
 *
 * The threshold is the count at rank ⌊share × n⌋ among the n tracked objects (nothing is hot
 * while share × n < 1: the top 10 % of five objects is not one object), recomputed at most
 * once per `recomputeMs` (a sort of n counts), and never below `minCount`, so that a
 * cluster that has seen every object once has nothing hot.
 */
export interface HotThresholdOptions {
  /** Share of the tracked objects that is hot, in (0, 1]. */
  share: number;
  /** A hot object has been counted at least this often. */
  minCount: number;
  recomputeMs: number;
  now: () => number;
}

export class HotThreshold {
  private thresholdCount = Number.POSITIVE_INFINITY;
  private computedAtMs = Number.NEGATIVE_INFINITY;
  private trackedAtCompute = 0;

  constructor(private readonly options: HotThresholdOptions) {}

  /**
   * The smallest count that is hot now. `tracked`: how many objects are tracked; `counts`
   * lists their global counts. Recomputed when `recomputeMs` passed or the number of
   * tracked objects grew by a tenth (a young table changes fast).
   */
  current(tracked: number, counts: () => Iterable<number>): number {
    const nowMs = this.options.now();
    if (nowMs - this.computedAtMs >= this.options.recomputeMs || tracked > this.trackedAtCompute * 1.1) {
      this.computedAtMs = nowMs;
      this.trackedAtCompute = tracked;
      this.thresholdCount = Math.max(this.options.minCount, topShareCount([...counts()], this.options.share));
    }
    return this.thresholdCount;
  }
}

/** The count at rank ⌊share × n⌋ (1-based) of `counts` sorted from the largest; Infinity when that rank is 0. */
export function topShareCount(counts: number[], share: number): number {
  const rank = Math.min(counts.length, Math.floor(share * counts.length));
  if (rank < 1) return Number.POSITIVE_INFINITY;
  counts.sort((a, b) => b - a);
  return counts[rank - 1] ?? Number.POSITIVE_INFINITY;
}
