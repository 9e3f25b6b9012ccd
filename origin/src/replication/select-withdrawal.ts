/**
 * When to take an automatic replica back (DCWS, Baker and Moon 1998, Section 4.5:
 * "workload characteristics have changed, and an imbalance may have developed between
 * home and co-op servers"; a timeout T_home on the home server bounds how soon). Pure.
 *
 * A replica this server placed, at least T_home old, is withdrawn when
 * - its co-op became loaded:  load_coop > (1 + r) · mean, or
 * - the load fell: this server would be at or below the cluster mean even with the load
 *   the replica carries back:  load_self + carried ≤ mean.
 * Placement needs load_self > (1 + r) · mean, so the band between mean and (1 + r) · mean
 * is the hysteresis that keeps a resource from going back and forth. The oldest replica
 * goes first; one per call (the controller calls once per T_st).
 */
export interface PlacedReplica {
  logical: string;
  path: string;
  /** The co-op's public URL. */
  coop: string;
  placedAtMs: number;
}

export interface WithdrawalInput {
  nowMs: number;
  selfLoad: number;
  mean: number;
  overloadRatio: number;
  homeMs: number;
  /** Live co-ops with fresh load records, by public URL. */
  coopLoads: ReadonlyMap<string, number>;
  placed: readonly PlacedReplica[];
  /** The load (metric's unit) the co-op reports for `path`; 0 when it does not list it. */
  carried: (path: string, coop: string) => number;
}

export type WithdrawalDecision = { kind: 'none' } | { kind: 'withdraw'; replica: PlacedReplica; reason: string };

const fixed = (value: number): string => (Number.isInteger(value) ? String(value) : value.toFixed(2));

export function selectWithdrawal(input: WithdrawalInput): WithdrawalDecision {
  const oldestFirst = [...input.placed].sort((a, b) => a.placedAtMs - b.placedAtMs || (a.logical < b.logical ? -1 : 1));
  for (const replica of oldestFirst) {
    if (input.nowMs - replica.placedAtMs < input.homeMs) continue;
    const coopLoad = input.coopLoads.get(replica.coop);
    if (coopLoad === undefined) continue; // no fresh figures: keep (a co-op that is down is recalled instead)
    if (coopLoad > (1 + input.overloadRatio) * input.mean) {
      return {
        kind: 'withdraw',
        replica,
        reason: `co-op ${replica.coop} loaded: ${fixed(coopLoad)} > ${fixed(1 + input.overloadRatio)} × cluster mean ${fixed(input.mean)}`,
      };
    }
    const carried = input.carried(replica.path, replica.coop);
    if (input.selfLoad + carried <= input.mean) {
      return {
        kind: 'withdraw',
        replica,
        reason: `load fell: ${fixed(input.selfLoad)} + ${fixed(carried)} carried by ${replica.coop} ≤ cluster mean ${fixed(input.mean)}`,
      };
    }
  }
  return { kind: 'none' };
}
