/**
 * Carries out the chaos schedule against the cluster while the browser loads pages: starts
 * each fault, heals it after its duration (restart the killed process and wait until it is
 * healthy, clear the emulator's outage or link override), and logs every start and end with
 * its time since the phase began. A replica counts as faulty from the fault's start until
 * its heal is complete, so a slow restart keeps it out of the draw.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { BASE_LINKS, type ChaosCluster, type ReplicaName } from './cluster.js';
import type { FaultKind, FaultPlan, FaultSchedule } from './schedule.js';

export interface FaultLogEntry {
  /** Milliseconds since the faulty phase started. */
  atMs: number;
  atEpochMs: number;
  replica: string;
  kind: FaultKind;
  event: 'start' | 'end' | 'error';
  description: string;
}

export interface FaultCounts {
  kills: number;
  partitions: number;
  slowdowns: number;
  /** Partitions by outage mode. */
  partitionModes: Record<string, number>;
  /** Most replicas faulty at the same moment (the bound is 2). */
  maxConcurrentFaulty: number;
  /** Kills and partitions that hit a replica while its link was slowed. */
  stackedOnSlowdown: number;
}

export class FaultRunner {
  readonly log: FaultLogEntry[] = [];
  readonly counts: FaultCounts = { kills: 0, partitions: 0, slowdowns: 0, partitionModes: {}, maxConcurrentFaulty: 0, stackedOnSlowdown: 0 };
  /** The faults in force on each replica (a kill or partition may be stacked on a slowdown). */
  private readonly active = new Map<string, FaultKind[]>();
  private readonly heals = new Set<Promise<void>>();
  private readonly abort = new AbortController();
  private loop: Promise<void> | undefined;
  private startedAtMs = 0;

  constructor(
    private readonly cluster: ChaosCluster,
    private readonly schedule: FaultSchedule,
    private readonly print: (line: string) => void = (line) => console.log(line),
  ) {}

  start(): void {
    this.startedAtMs = Date.now();
    this.loop = this.run();
  }

  /** Stops drawing faults, cuts every running fault short and waits until all replicas are healthy. */
  async stop(): Promise<void> {
    this.abort.abort();
    await this.loop;
    await Promise.all([...this.heals]);
  }

  private async run(): Promise<void> {
    const { signal } = this.abort;
    while (!signal.aborted) {
      await sleep(this.schedule.nextGapMs(), undefined, { signal }).catch(() => undefined);
      while (!signal.aborted && this.faulty().size >= this.schedule.maxFaultyReplicas) {
        await Promise.race([...this.heals, sleep(1_000, undefined, { signal }).catch(() => undefined)]);
      }
      if (signal.aborted) break;
      const fault = this.schedule.nextFault(this.faulty(), this.slowedOnly());
      if (fault) await this.begin(fault);
    }
  }

  private faulty(): Set<string> {
    return new Set(this.active.keys());
  }

  private slowedOnly(): Set<string> {
    return new Set([...this.active].filter(([, kinds]) => kinds.every((kind) => kind === 'slow')).map(([name]) => name));
  }

  private async begin(fault: FaultPlan): Promise<void> {
    const replica = this.cluster.replica(fault.replica as ReplicaName);
    const stacked = this.active.has(fault.replica);
    this.active.set(fault.replica, [...(this.active.get(fault.replica) ?? []), fault.kind]);
    this.counts.maxConcurrentFaulty = Math.max(this.counts.maxConcurrentFaulty, this.active.size);
    if (stacked) this.counts.stackedOnSlowdown += 1;
    this.record(fault, 'start', stacked ? `${fault.description} (on the slowed link)` : fault.description);
    if (fault.kind === 'kill') {
      this.counts.kills += 1;
      await replica.process.kill9();
    } else if (fault.kind === 'partition') {
      this.counts.partitions += 1;
      this.counts.partitionModes[fault.outage!] = (this.counts.partitionModes[fault.outage!] ?? 0) + 1;
      replica.emulator.setOutage(fault.outage!);
    } else {
      this.counts.slowdowns += 1;
      replica.emulator.update(fault.link!);
    }
    const heal = this.healAfter(fault).finally(() => {
      this.heals.delete(heal);
      const kinds = this.active.get(fault.replica) ?? [];
      kinds.splice(kinds.indexOf(fault.kind), 1);
      if (kinds.length === 0) this.active.delete(fault.replica);
    });
    this.heals.add(heal);
  }

  private async healAfter(fault: FaultPlan): Promise<void> {
    await sleep(fault.durationMs, undefined, { signal: this.abort.signal }).catch(() => undefined);
    const replica = this.cluster.replica(fault.replica as ReplicaName);
    if (fault.kind === 'partition') {
      replica.emulator.setOutage(null);
      this.record(fault, 'end', 'link up');
      return;
    }
    if (fault.kind === 'slow') {
      const base = BASE_LINKS[fault.replica as ReplicaName];
      replica.emulator.update({ delayMs: base.delayMs, bandwidthBytesPerSec: base.bandwidthBytesPerSec ?? null, stall: null });
      this.record(fault, 'end', 'link back to normal');
      return;
    }
    // A restart that fails is tried again (bounded): the replica stays faulty meanwhile.
    for (let attempt = 1; attempt <= 5; attempt++) {
      const restartedAtMs = Date.now();
      try {
        await replica.process.start();
        this.record(fault, 'end', `restarted, healthy after ${Date.now() - restartedAtMs} ms`);
        return;
      } catch (error) {
        this.record(fault, 'error', `restart attempt ${attempt} failed: ${(error as Error).message}`);
        await replica.process.kill9();
      }
    }
  }

  private record(fault: FaultPlan, event: FaultLogEntry['event'], description: string): void {
    const nowMs = Date.now();
    const entry: FaultLogEntry = { atMs: nowMs - this.startedAtMs, atEpochMs: nowMs, replica: fault.replica, kind: fault.kind, event, description };
    this.log.push(entry);
    this.print(`  [fault +${(entry.atMs / 1000).toFixed(1).padStart(6)} s] ${entry.replica} ${event.padEnd(5)} ${description}`);
  }
}
