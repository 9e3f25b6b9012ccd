/**
 * The chaos schedule: a seeded source of faults. Every draw (the pause before the next
 * fault, its kind, its target, its length and its parameters) comes from one xoshiro stream
 * (@webpp/netem's createRandom), so a seed names a run. Targets are drawn among the replicas
 * that are healthy when the fault starts, and never more than `maxFaultyReplicas` (2 of 3)
 * are faulty at once: at least one replica is always fully healthy. A kill or a partition
 * may also land on a replica that is only slowed (a server that dies while it streams a
 * body slowly, the hardest case for the worker); that adds no faulty replica.
 *
 * Kinds:
 *  - kill: `kill -9` of the server process; restarted (same port, same data dir) after the downtime;
 *  - partition: the link emulator's outage, "reset", "refuse" or "hang" (black hole);
 *  - slow: the link gets a long delay, a narrow bandwidth, or frequent stalls.
 */
import type { LinkProfile, OutageMode, RandomSource } from '@webpp/netem';

export type FaultKind = 'kill' | 'partition' | 'slow';

export interface FaultPlan {
  kind: FaultKind;
  replica: string;
  durationMs: number;
  /** For partitions. */
  outage?: OutageMode;
  /** For slowdowns: the link parameters overridden for the duration. */
  link?: Partial<LinkProfile>;
  /** One line for the log, e.g. "slow: delay 850 ms". */
  description: string;
}

export interface FaultScheduleOptions {
  replicas: readonly string[];
  /** At most this many replicas are faulty at once. Default 2. */
  maxFaultyReplicas?: number;
  /** Pause between two fault starts, drawn uniformly. Default [500, 3000]. */
  gapMs?: readonly [number, number];
  /** Relative frequency of each kind. Default kill 3, partition 4, slow 3. */
  weights?: Readonly<Record<FaultKind, number>>;
}

const DOWNTIME_MS: Record<FaultKind, readonly [number, number]> = {
  kill: [1_000, 6_000],
  partition: [1_000, 10_000],
  slow: [3_000, 12_000],
};
const OUTAGES: readonly OutageMode[] = ['reset', 'refuse', 'hang'];

export class FaultSchedule {
  readonly maxFaultyReplicas: number;
  private readonly replicas: readonly string[];
  private readonly gapMs: readonly [number, number];
  private readonly weights: Readonly<Record<FaultKind, number>>;

  constructor(
    private readonly random: RandomSource,
    options: FaultScheduleOptions,
  ) {
    this.replicas = options.replicas;
    this.maxFaultyReplicas = options.maxFaultyReplicas ?? 2;
    if (this.maxFaultyReplicas >= this.replicas.length) throw new RangeError('at least one replica must stay healthy');
    this.gapMs = options.gapMs ?? [500, 3_000];
    this.weights = options.weights ?? { kill: 3, partition: 4, slow: 3 };
  }

  /** The pause before the next fault. */
  nextGapMs(): number {
    return Math.round(this.uniform(this.gapMs));
  }

  /**
   * The next fault, on a replica not in `faulty` (or, for a kill or partition, on one in
   * `slowedOnly`); undefined when the bound allows none now.
   */
  nextFault(faulty: ReadonlySet<string>, slowedOnly: ReadonlySet<string> = new Set()): FaultPlan | undefined {
    const healthy = this.replicas.filter((name) => !faulty.has(name));
    if (faulty.size >= this.maxFaultyReplicas || healthy.length === 0) return undefined;
    const kind = this.pickKind();
    const candidates = kind === 'slow' ? healthy : [...healthy, ...this.replicas.filter((name) => slowedOnly.has(name))];
    const replica = this.pick(candidates);
    const durationMs = Math.round(this.uniform(DOWNTIME_MS[kind]));
    if (kind === 'kill') return { kind, replica, durationMs, description: `kill -9, restart after ${durationMs} ms` };
    if (kind === 'partition') {
      const outage = this.pick(OUTAGES);
      return { kind, replica, durationMs, outage, description: `partition (${outage}) for ${durationMs} ms` };
    }
    return { kind, replica, durationMs, ...this.slowdown(durationMs) };
  }

  private slowdown(durationMs: number): { link: Partial<LinkProfile>; description: string } {
    const variant = this.pick(['delay', 'bandwidth', 'stall'] as const);
    if (variant === 'delay') {
      const meanMs = Math.round(this.uniform([300, 1_500]));
      return {
        link: { delayMs: { distribution: 'lognormal', meanMs, stdDevMs: meanMs * 0.3 } },
        description: `slow: delay ${meanMs} ms for ${durationMs} ms`,
      };
    }
    if (variant === 'bandwidth') {
      const bytesPerSec = Math.round(this.uniform([100_000, 600_000]));
      return { link: { bandwidthBytesPerSec: bytesPerSec }, description: `slow: bandwidth ${Math.round(bytesPerSec / 1000)} kB/s for ${durationMs} ms` };
    }
    const probability = Math.round(this.uniform([0.2, 0.6]) * 100) / 100;
    const stallMs = Math.round(this.uniform([1_000, 4_000]));
    const phase = this.pick(['first-byte', 'body'] as const);
    return {
      link: { stall: { probability, durationMs: stallMs, phase } },
      description: `slow: ${phase} stalls of ${stallMs} ms, p=${probability}, for ${durationMs} ms`,
    };
  }

  private pickKind(): FaultKind {
    const kinds = Object.keys(this.weights) as FaultKind[];
    const total = kinds.reduce((sum, kind) => sum + this.weights[kind], 0);
    let draw = this.random() * total;
    for (const kind of kinds) {
      draw -= this.weights[kind];
      if (draw < 0) return kind;
    }
    return kinds[kinds.length - 1]!;
  }

  private pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.random() * items.length)]!;
  }

  private uniform([low, high]: readonly [number, number]): number {
    return low + (high - low) * this.random();
  }
}
