/**
 * One durability run (issue 10 §7): three real `webpp-origin` processes take a seeded loop
 * of POST / PUT / DELETE while a seeded schedule kill -9s one of them at a time and
 * restarts it from its data folder; then writes stop, the directories must converge, all
 * three are restarted cleanly, and the final state is checked against every answer the
 * client got (invariants.ts). Bounded in writes, kills and time; loopback only.
 */
import { createRandom } from '@webpp/netem/model';
import { DurabilityCluster, type CliEntry, type ServerNode } from './cluster.js';
import { checkInvariants, outcomeOf, type Violation } from './invariants.js';
import { checkStore, directoryStoreMismatches, finalStateOf, waitForConvergence, type StoreCheck } from './observe.js';
import { runWrites, type WriteMethod, type WriteRecord } from './workload.js';

export interface DurabilityOptions {
  seed: number;
  kills: number;
  /** Pause between a server's restart and the next kill, drawn in [min, max]. */
  killGapMs: [number, number];
  /** How long a killed server stays down before its restart, drawn in [min, max]. */
  downMs: [number, number];
  maxWrites: number;
  concurrency: number;
  paths: string[];
  syncIntervalMs: number;
  /** Writes go on this long after the last restart. */
  tailMs: number;
  /** Bound on the whole write phase. */
  maxWriteMs: number;
  convergeTimeoutMs: number;
  entry: CliEntry;
}

export const DEFAULT_PATHS = ['/k0.txt', '/k1.txt', '/k2.txt', '/k3.txt', '/docs/k4.html', '/docs/k5.css'];

interface KillRecord {
  server: string;
  killedAtMs: number;
  restartedAtMs: number | undefined;
  error?: string;
}

export interface DurabilityResult {
  seed: number;
  writes_attempted: number;
  writes_acknowledged: number;
  writes_refused: number;
  writes_unacknowledged: number;
  by_method: Record<WriteMethod, { attempted: number; acknowledged: number }>;
  acknowledged_writes_lost: number;
  kills: number;
  restarts: number;
  restart_failures: number;
  corrupt_stores: number;
  converged: boolean;
  converge_ms: number | null;
  converged_after_restart: boolean;
  directory_store_mismatches: number;
  put_pushes_unconfirmed: number;
  put_pushes_unconfirmed_never_applied: number;
  duration_ms: number;
  violations: Violation[];
  store_problems: string[];
  mismatches: string[];
  kill_log: KillRecord[];
  /** Every write and its answer (for the evidence behind a violation; not part of the summary). */
  writes: WriteRecord[];
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

function between(random: () => number, [min, max]: [number, number]): number {
  return min + random() * (max - min);
}

interface KillLoopContext {
  cluster: DurabilityCluster;
  options: DurabilityOptions;
  random: () => number;
  stop: () => boolean;
  /** Writes answered so far (the loop appends to it). */
  records: WriteRecord[];
  /** Violations and store problems found on a server right after its restart. */
  violations: Violation[];
  storeProblems: string[];
}

/**
 * Kills one server at a time at seeded moments; restarts it, checks what it serves against
 * the writes answered until then (before it takes writes again), then lets writes resume.
 */
async function killLoop({ cluster, options, random, stop, records, violations, storeProblems }: KillLoopContext): Promise<KillRecord[]> {
  const log: KillRecord[] = [];
  const serverUrls = new Map(cluster.nodes.map((node) => [node.name, node.url]));
  for (let i = 0; i < options.kills && !stop(); i += 1) {
    await sleep(between(random, options.killGapMs));
    const victim = cluster.nodes[Math.floor(random() * cluster.nodes.length)] as ServerNode;
    const record: KillRecord = { server: victim.name, killedAtMs: Date.now(), restartedAtMs: undefined };
    log.push(record);
    await cluster.kill(victim);
    await sleep(between(random, options.downMs));
    try {
      await cluster.start(victim, { markUp: false });
      record.restartedAtMs = Date.now();
      const answered = [...records];
      const check = await checkStore(victim, options.paths, { quiet: false });
      storeProblems.push(...check.problems.map((problem) => `${victim.name}: after restart ${i + 1}: ${problem}`));
      violations.push(...checkInvariants(answered, new Map([[victim.name, check.replicas]]), serverUrls, victim.name).violations);
      victim.up = true;
    } catch (error) {
      record.error = (error as Error).message.slice(0, 2000);
      return log; // a server that cannot restart stays down: no further kills (never two down)
    }
  }
  return log;
}

export async function runDurability(options: DurabilityOptions, progress: (line: string) => void = () => undefined): Promise<DurabilityResult> {
  const startedAtMs = Date.now();
  const cluster = await DurabilityCluster.create({ entry: options.entry, syncIntervalMs: options.syncIntervalMs });
  try {
    await cluster.startAll();
    progress(`seed ${options.seed}: 3 servers up (${cluster.nodes.map((node) => node.url).join(' ')})`);
    const writeRandom = createRandom('durability-writes', options.seed);
    const killRandom = createRandom('durability-kills', options.seed);
    const deadlineMs = Date.now() + options.maxWriteMs;
    let killsDone = false;
    let tailEndsAtMs = Infinity;
    const records: WriteRecord[] = [];
    const restartViolations: Violation[] = [];
    const restartProblems: string[] = [];
    const writes = runWrites({
      records,
      cluster,
      random: writeRandom,
      paths: options.paths,
      maxWrites: options.maxWrites,
      concurrency: options.concurrency,
      deadlineMs,
      shouldStop: () => killsDone && Date.now() >= tailEndsAtMs,
    });
    const kills = await killLoop({
      cluster,
      options,
      random: killRandom,
      stop: () => Date.now() >= deadlineMs,
      records,
      violations: restartViolations,
      storeProblems: restartProblems,
    });
    killsDone = true;
    tailEndsAtMs = Date.now() + options.tailMs;
    await writes;
    records.sort((a, b) => a.id - b.id);
    const lastWriteAtMs = Math.max(...records.map((record) => record.endAtMs));
    progress(`seed ${options.seed}: ${records.length} writes, ${kills.length} kills; waiting for convergence`);

    // Every server that could restart is up; the directories must agree within the bound.
    const converged = await waitForConvergence(cluster, options.convergeTimeoutMs);
    await sleep(3 * options.syncIntervalMs); // let queued update pushes retry once more

    // A final clean restart of all three, from their data folders.
    await Promise.all(cluster.nodes.map((node) => cluster.stop(node)));
    const restartErrors: string[] = [];
    await Promise.all(
      cluster.nodes.map((node) => cluster.start(node).catch((error: Error) => restartErrors.push(`${node.name}: ${error.message.slice(0, 2000)}`))),
    );
    const afterRestart = await waitForConvergence(cluster, options.convergeTimeoutMs);
    const checks: StoreCheck[] = await Promise.all(
      cluster.nodes.filter((node) => node.up).map((node) => checkStore(node, options.paths, { quiet: true })),
    );
    const final = finalStateOf(checks);
    const serverUrls = new Map(cluster.nodes.map((node) => [node.name, node.url]));
    const invariants = checkInvariants(records, final, serverUrls);
    const violations = [...restartViolations, ...invariants.violations];
    const lostWriteIds = new Set(violations.filter((violation) => violation.invariant !== 'no-phantom').map((violation) => violation.writeId));
    const damage = cluster.damageReports();
    const storeProblems = [
      ...restartErrors,
      ...kills.filter((kill) => kill.error !== undefined).map((kill) => `${kill.server} restart after kill: ${kill.error}`),
      ...damage,
      ...restartProblems,
      ...checks.flatMap((check) => check.problems.map((problem) => `${check.server}: ${problem}`)),
    ];
    const damaged = new Set([...storeProblems.map((problem) => problem.split(/[: ]/)[0])]);
    const mismatches = afterRestart === undefined ? [] : directoryStoreMismatches(cluster, afterRestart.listing, final, options.paths);
    const byMethod = Object.fromEntries(
      (['POST', 'PUT', 'DELETE'] as const).map((method) => {
        const mine = records.filter((record) => record.method === method);
        return [method, { attempted: mine.length, acknowledged: mine.filter((record) => outcomeOf(record) === 'acknowledged').length }];
      }),
    ) as DurabilityResult['by_method'];
    const count = (outcome: string): number => records.filter((record) => outcomeOf(record) === outcome).length;
    return {
      seed: options.seed,
      writes_attempted: records.length,
      writes_acknowledged: count('acknowledged'),
      writes_refused: count('refused'),
      writes_unacknowledged: count('unknown'),
      by_method: byMethod,
      acknowledged_writes_lost: lostWriteIds.size,
      kills: kills.length,
      restarts: kills.filter((kill) => kill.restartedAtMs !== undefined).length,
      restart_failures: kills.filter((kill) => kill.error !== undefined).length + restartErrors.length,
      corrupt_stores: damaged.size,
      converged: converged !== undefined,
      converge_ms: converged === undefined ? null : Math.max(0, converged.agreedAtMs - lastWriteAtMs),
      converged_after_restart: afterRestart !== undefined,
      directory_store_mismatches: mismatches.length,
      put_pushes_unconfirmed: invariants.unconfirmedPushes,
      put_pushes_unconfirmed_never_applied: invariants.unconfirmedPushesNeverApplied,
      duration_ms: Date.now() - startedAtMs,
      violations,
      store_problems: storeProblems,
      mismatches,
      kill_log: kills,
      writes: records,
    };
  } finally {
    await cluster.dispose();
  }
}

/** The writes behind a violation, one line each, times relative to the first write: evidence for a report. */
export function traceOf(result: DurabilityResult, violation: Violation, lines = 12): string {
  const t0 = result.writes[0]?.sentAtMs ?? 0;
  const related = result.writes.filter(
    (write) => write.path === violation.path && (write.server === violation.server || write.method === 'PUT') && write.id <= (violation.writeId ?? Infinity) + 20,
  );
  const describe = (write: WriteRecord): string =>
    `#${write.id} ${write.method} ${write.path} on ${write.server} sent +${write.sentAtMs - t0} ms, answered +${write.endAtMs - t0} ms: ${write.status}` +
    `${write.error ? ` ${write.error}` : ''}${write.version ? ` version ${write.version}` : ''}` +
    `${write.pushes ? ` pushes ${write.pushes.map((push) => `${push.server}:${push.status}`).join(',')}` : ''}`;
  const kills = result.kill_log.map((kill) => `kill -9 ${kill.server} at +${kill.killedAtMs - t0} ms, up again at +${(kill.restartedAtMs ?? NaN) - t0} ms`);
  return [`${violation.invariant} (${violation.phase}) on ${violation.server} ${violation.path}: ${violation.detail}`, ...related.slice(-lines).map(describe), ...kills].join('\n');
}
