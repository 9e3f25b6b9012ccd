/**
 * The record of automatic replication decisions (operator control: every decision is in
 * the stats, /metrics and the log, with its reason), and the flap count: a flap is a
 * resource placed on a co-op, taken back, and placed on the same co-op again, all within
 * T_home of the first placement (issue 14). The controller's guards should keep it at 0;
 * this counts independently of them.
 */
export type DecisionKind = 'place' | 'withdraw' | 'recall';

export interface Decision {
  atMs: number;
  kind: DecisionKind;
  logical: string;
  coop: string;
  reason: string;
}

const KEPT_DECISIONS = 50;

export class DecisionLog {
  readonly counts: Record<DecisionKind, number> = { place: 0, withdraw: 0, recall: 0 };
  flaps = 0;
  private readonly recent: Decision[] = [];
  /** Per (logical, co-op): when it was last placed and last taken back. */
  private readonly history = new Map<string, { placedAtMs: number; removedAtMs: number | undefined }>();

  constructor(private readonly homeMs: number) {}

  add(decision: Decision): void {
    this.counts[decision.kind] += 1;
    this.recent.push(decision);
    if (this.recent.length > KEPT_DECISIONS) this.recent.shift();
    const key = `${decision.logical}\n${decision.coop}`;
    const previous = this.history.get(key);
    if (decision.kind === 'place') {
      if (previous?.removedAtMs !== undefined && decision.atMs - previous.placedAtMs < this.homeMs) this.flaps += 1;
      this.history.set(key, { placedAtMs: decision.atMs, removedAtMs: undefined });
    } else if (previous !== undefined) {
      previous.removedAtMs = decision.atMs;
    } else {
      this.history.set(key, { placedAtMs: Number.NEGATIVE_INFINITY, removedAtMs: decision.atMs });
    }
  }

  /** When `logical` was last taken back from `coop` by this server; undefined: never. */
  lastRemovedAtMs(logical: string, coop: string): number | undefined {
    return this.history.get(`${logical}\n${coop}`)?.removedAtMs;
  }

  /** The latest decisions, oldest first. */
  decisions(): Decision[] {
    return this.recent.map((decision) => ({ ...decision }));
  }
}
