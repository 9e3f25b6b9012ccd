import type { LatencyTable } from './latency-table.js';
import type { RandomSource, ReplicaAttempt, ServerId } from './types.js';

/**
 * The whole attempt order of Figure 4 (Web++ paper, Section 4.1) for one request:
 *  1. available servers: in random order if every one of them has an expired entry
 *     ("random-all-expired"), else by ascending S-percentile, eq. (1) ("lowest-percentile");
 *     servers never sampled rank after those with estimates;
 *  2. failed servers as a last resort ("last-resort-failed"), the one whose probe is due
 *     soonest first. A failed server is never ranked ahead of an available one.
 * The caller walks the list: on timeout or error it calls `table.markFailed(server)` and
 * moves on; on a response it calls `table.recordSample(server, latencyMs)`.
 */
export function rankReplicas(
  candidates: readonly ServerId[],
  table: LatencyTable,
  random: RandomSource = Math.random,
): ReplicaAttempt[] {
  const unique = [...new Set(candidates)];
  const available = unique.filter((server) => !table.isFailed(server));
  const failed = unique.filter((server) => table.isFailed(server));

  let ordered: ServerId[];
  let reason: ReplicaAttempt['reason'];
  if (available.every((server) => table.isExpired(server))) {
    ordered = shuffle(available, random);
    reason = 'random-all-expired';
  } else {
    const percentileMs = new Map(available.map((server) => [server, table.sPercentileMs(server)]));
    // Array.prototype.sort is stable: equal S-percentiles keep the origin's preference order.
    ordered = [...available].sort((a, b) => compareNumbers(percentileMs.get(a), percentileMs.get(b)));
    reason = 'lowest-percentile';
  }

  const nextProbeAtMs = (server: ServerId): number => table.get(server)?.nextProbeAtMs ?? 0;
  const lastResort = [...failed].sort((a, b) => nextProbeAtMs(a) - nextProbeAtMs(b));

  return [
    ...ordered.map((server) => ({ server, timeoutMs: table.timeoutMs(server), reason })),
    ...lastResort.map((server) => ({ server, timeoutMs: table.timeoutMs(server), reason: 'last-resort-failed' as const })),
  ];
}

/** The first attempt of rankReplicas: the server Figure 4 selects. Undefined without candidates. */
export function selectReplica(
  candidates: readonly ServerId[],
  table: LatencyTable,
  random: RandomSource = Math.random,
): ReplicaAttempt | undefined {
  return rankReplicas(candidates, table, random)[0];
}

/**
 * After every request, Figure 4 refreshes "the server with the oldest expired entry" by an
 * asynchronous HEAD request. Returns that server among the available candidates (default:
 * every server in the table), or undefined when none has expired. Servers never sampled
 * count as the oldest. The caller should not send a second refresh while one is in flight.
 */
export function refreshTarget(table: LatencyTable, candidates?: readonly ServerId[]): ServerId | undefined {
  let oldest: ServerId | undefined;
  let oldestSampleAtMs = Infinity;
  for (const server of candidates ?? table.servers()) {
    if (table.isFailed(server) || !table.isExpired(server)) continue;
    const lastSampleAtMs = table.get(server)?.lastSampleAtMs ?? 0;
    if (lastSampleAtMs < oldestSampleAtMs) {
      oldest = server;
      oldestSampleAtMs = lastSampleAtMs;
    }
  }
  return oldest;
}

/**
 * Failed servers whose next probe is due (Figure 4: probe every F until a response),
 * earliest first. For each, send an asynchronous HEAD, call `table.recordProbeSent(server)`,
 * and on a response `table.recordSample(server, latencyMs)`.
 */
export function dueProbes(table: LatencyTable, nowMs: number = table.now()): ServerId[] {
  const due: { server: ServerId; atMs: number }[] = [];
  for (const server of table.servers()) {
    const row = table.get(server);
    if (row?.state === 'failed' && row.nextProbeAtMs <= nowMs) due.push({ server, atMs: row.nextProbeAtMs });
  }
  return due.sort((a, b) => a.atMs - b.atMs).map(({ server }) => server);
}

function compareNumbers(a = Infinity, b = Infinity): number {
  if (a === b) return 0;
  return a < b ? -1 : 1;
}

/** Fisher–Yates with an injectable random source. */
function shuffle<T>(items: readonly T[], random: RandomSource): T[] {
  const result = [...items];
  for (let i = result.length - 1; i > 0; i--) {
    const j = Math.min(i, Math.max(0, Math.floor(random() * (i + 1))));
    [result[i], result[j]] = [result[j] as T, result[i] as T];
  }
  return result;
}
