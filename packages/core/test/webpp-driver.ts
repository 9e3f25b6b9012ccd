/**
 * A small deterministic driver for the webpp policy's pure tests: one client making one
 * request at a time against modelled replicas, in virtual time. It plays the engine's part
 * as the contract describes it (engine/policy-types.ts): the planned attempts in order, a
 * hedge at hedgeAfterMs when admitHedge says yes, failover on timeout or error, a timed-out
 * attempt kept running until its deadline, the first head wins and its body follows;
 * maintenance after every request and when its timer is due. The simulator runs the real
 * engine; this keeps the policy's tests free of it.
 */
import type { BackgroundRequest, ClientPolicy, ExchangeSample } from '@webpp/core';

/** What one server does for an exchange sent at `atMs`. */
export type ServerModel = (atMs: number, random: () => number) => { ttfbMs: number; bytesPerMs: number } | 'refuse' | 'hang';

export interface DriveOptions {
  servers: Record<string, ServerModel>;
  requests: number;
  /** Time between request starts (ms); a request that takes longer delays the next. */
  intervalMs: number;
  sizeBytes: number | ((index: number) => number);
  random: () => number;
  startMs?: number;
  /**
   * Plan with a size only once a response of that size has come, as the worker does (its
   * sizes come from earlier responses when the bindings carry none: sw/src/size-memory.ts);
   * one logical URL per size. Default false: every plan knows its size, as in the simulator.
   */
  learnSizes?: boolean;
}

interface ServedRequest {
  startMs: number;
  server: string;
  totalMs: number;
  hedged: boolean;
}

export interface DriveResult {
  served: ServedRequest[];
  failed: number;
  hedges: number;
  refreshes: number;
  probes: number;
  background: BackgroundRequest[];
  endMs: number;
}

interface Running {
  server: string;
  startMs: number;
  purpose: 'request' | 'hedge';
  headAtMs: number;
  timeoutAtMs: number;
  deadlineAtMs: number;
  timedOut: boolean;
  bytesPerMs: number;
}

export function drive(policy: ClientPolicy, options: DriveOptions): DriveResult {
  const candidates = Object.keys(options.servers);
  const result: DriveResult = { served: [], failed: 0, hedges: 0, refreshes: 0, probes: 0, background: [], endMs: 0 };
  let nowMs = options.startMs ?? 1_000_000;
  const sizesServed = new Set<number>();
  const exchange = (server: string, atMs: number) => (options.servers[server] as ServerModel)(atMs, options.random);

  const runBackground = (atMs: number, fromCandidates: boolean): void => {
    const requests = policy.maintenance?.({ candidates: fromCandidates ? candidates : [], inFlight: new Set(), nowMs: atMs }) ?? [];
    for (const request of requests) {
      result.background.push(request);
      if (request.purpose === 'probe') result.probes++;
      else result.refreshes++;
      const answer = exchange(request.server, atMs);
      const sample: ExchangeSample = { server: request.server, purpose: request.purpose, outcome: 'served', nowMs: atMs };
      if (answer === 'refuse') sample.outcome = 'network-error';
      else if (answer === 'hang') Object.assign(sample, { outcome: 'timeout', nowMs: atMs + 2_000 });
      else {
        sample.ttfbMs = answer.ttfbMs;
        sample.nowMs = atMs + answer.ttfbMs;
        if (request.method === 'range' && request.rangeBytes !== undefined) {
          sample.bodyBytes = request.rangeBytes;
          sample.bodyMs = request.rangeBytes / answer.bytesPerMs;
          sample.nowMs += sample.bodyMs;
        }
      }
      policy.observe(sample);
    }
  };

  for (let index = 0; index < options.requests; index++) {
    const dueAtMs = policy.nextMaintenanceAtMs?.(nowMs);
    if (dueAtMs !== undefined && dueAtMs <= nowMs) runBackground(nowMs, false);
    const sizeBytes = typeof options.sizeBytes === 'number' ? options.sizeBytes : options.sizeBytes(index);
    const startMs = nowMs;
    const known = options.learnSizes !== true || sizesServed.has(sizeBytes);
    const logicalUrl = options.learnSizes === true ? `/file-${sizeBytes}` : `/r${index}`;
    const attempts = policy.plan({ logicalUrl, method: 'GET', candidates, ...(known ? { sizeBytes } : {}), nowMs: startMs });
    const running: Running[] = [];
    let next = 0;
    let hedgeAtMs = attempts[1]?.hedgeAfterMs === undefined ? Infinity : startMs + attempts[1].hedgeAfterMs;
    let hedged = false;
    const start = (atMs: number, purpose: Running['purpose']): void => {
      for (let attempt = attempts[next++]; attempt !== undefined; attempt = attempts[next++]) {
        const answer = exchange(attempt.server, atMs);
        if (answer === 'refuse') {
          policy.observe({ server: attempt.server, purpose, outcome: 'network-error', nowMs: atMs });
          continue;
        }
        running.push({
          server: attempt.server,
          startMs: atMs,
          purpose,
          headAtMs: answer === 'hang' ? Infinity : atMs + answer.ttfbMs,
          timeoutAtMs: atMs + attempt.timeoutMs,
          deadlineAtMs: atMs + Math.max(attempt.timeoutMs, attempt.deadlineMs ?? 0),
          timedOut: false,
          bytesPerMs: answer === 'hang' ? 1 : answer.bytesPerMs,
        });
        return;
      }
    };
    start(startMs, 'request');
    if (next > 1) hedgeAtMs = Infinity; // the primary failed at once: plain failover
    let winner: Running | undefined;
    let clockMs = startMs;
    for (let guard = 0; guard < 100 && winner === undefined; guard++) {
      const heads = running.filter((r) => r.headAtMs <= r.deadlineAtMs).map((r) => r.headAtMs);
      const timeouts = running.filter((r) => !r.timedOut && r.headAtMs > r.timeoutAtMs).map((r) => r.timeoutAtMs);
      clockMs = Math.min(...heads, ...timeouts, hedgeAtMs);
      if (!Number.isFinite(clockMs)) break;
      const head = running.find((r) => r.headAtMs === clockMs && r.headAtMs <= r.deadlineAtMs);
      if (head !== undefined) {
        winner = head;
      } else if (clockMs === hedgeAtMs) {
        hedgeAtMs = Infinity;
        if (policy.admitHedge?.(attempts[1]?.server as string, clockMs) ?? true) {
          hedged = true;
          result.hedges++;
          start(clockMs, 'hedge');
        }
      } else {
        const expired = running.find((r) => !r.timedOut && r.timeoutAtMs === clockMs) as Running;
        expired.timedOut = true;
        policy.observe({ server: expired.server, purpose: expired.purpose, outcome: 'timeout', nowMs: clockMs });
        if (running.every((r) => r.timedOut)) {
          hedgeAtMs = Infinity;
          start(clockMs, 'request');
        }
      }
    }
    if (winner === undefined) {
      result.failed++;
    } else {
      const bodyMs = sizeBytes / winner.bytesPerMs;
      for (const loser of running) {
        if (loser !== winner) policy.observe({ server: loser.server, purpose: loser.purpose, outcome: 'cancelled', nowMs: clockMs });
      }
      policy.observe({
        server: winner.server,
        purpose: winner.purpose,
        outcome: 'served',
        nowMs: clockMs + bodyMs,
        ttfbMs: winner.headAtMs - winner.startMs,
        bodyBytes: sizeBytes,
        bodyMs,
      });
      clockMs += bodyMs;
      sizesServed.add(sizeBytes);
      result.served.push({ startMs, server: winner.server, totalMs: clockMs - startMs, hedged });
    }
    runBackground(clockMs, true);
    nowMs = Math.max(startMs + options.intervalMs, clockMs);
  }
  result.endMs = nowMs;
  return result;
}

export function meanOf(values: number[]): number {
  return values.reduce((a, b) => a + b, 0) / values.length;
}

export function quantileOf(values: number[], q: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] as number;
}
