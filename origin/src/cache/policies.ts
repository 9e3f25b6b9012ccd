/**
 * Replacement policies by name, after GOS (Chen, Wang, Lau, Section 4.4), which compares
 * them: each gives an entry a priority, the entry with the lowest is discarded first ("All
 * the objects in the HOC are sorted by their counter or weighted counter values. The last
 * object in the queue … is the first to be discarded"), and a newcomer is admitted only if
 * what it would displace ranks no higher than itself.
 *
 * - `weighted-lfu`: the (aged) access count divided by the object size "in log scale", so
 *   that of two objects as popular the larger one loses out.
 * - `lfu-aging`: the aged access count alone.
 * - `lru`: the time of the last access; a newcomer is always the most recent, so always admitted.
 *
 * Counts age in the count source (access-counts.ts halves them every interval), so both LFU
 * policies see aged counts, as in the paper, where aging is applied to the AGAC itself.
 */

export const POLICY_NAMES = ['weighted-lfu', 'lfu-aging', 'lru'] as const;
export type PolicyName = (typeof POLICY_NAMES)[number];

/** What a policy may look at. */
export interface RankedObject {
  sizeBytes: number;
  /** Aged access count from the count source. */
  count: number;
  /** Logical time of the last access (larger = more recent). */
  lastAccessTick: number;
}

export interface ReplacementPolicy {
  readonly name: PolicyName;
  /** Higher keeps; the lowest is evicted first. */
  priority(object: RankedObject): number;
}

/** GOS Weighted-LFU: count ÷ log(size). log2 of at least 2 bytes, so the divisor is ≥ 1. */
export function weightedLfuPriority({ count, sizeBytes }: RankedObject): number {
  return count / Math.log2(Math.max(2, sizeBytes));
}

const POLICIES: Record<PolicyName, ReplacementPolicy> = {
  'weighted-lfu': { name: 'weighted-lfu', priority: weightedLfuPriority },
  'lfu-aging': { name: 'lfu-aging', priority: ({ count }) => count },
  lru: { name: 'lru', priority: ({ lastAccessTick }) => lastAccessTick },
};

export function replacementPolicy(name: PolicyName): ReplacementPolicy {
  return POLICIES[name];
}
