/**
 * The visitor's loop: Chromium loads the site's pages one after another (logical URLs, in
 * turn), bounded in count and in time. After each load the worker's state is read, to sum
 * its counters, to count which replica served each request, and, for a load that failed,
 * to keep the worker's own account of the failed resources (decisions and events).
 */
import type { Page } from '@playwright/test';
import type { LinkIncident } from './cluster.js';
import { EventTally } from './event-tally.js';
import { loadPage, type PageLoadResult } from './page-load.js';
import { controllerState, CounterTotals, workerStory, type DecisionRecord, type WebppEvent } from './worker-counters.js';

interface FailedLoadDetail {
  index: number;
  /** Milliseconds since the phase started. */
  atMs: number;
  startedAtEpochMs: number;
  endedAtEpochMs: number;
  /** What the link emulators did not carry through during the load (and a second before). */
  linkIncidents: LinkIncident[];
  path: string;
  navigationError?: string;
  resources: { url: string; why: string; decisions: DecisionRecord[]; events: WebppEvent[] }[];
  navigationStory?: { decisions: DecisionRecord[]; events: WebppEvent[] };
}

/**
 * A load slower than LoopOptions.traceSlowerThanMs, with what the worker decided and did
 * meanwhile: to tell why the tail under faults is long (which resource, which replica,
 * which timeout or body).
 */
interface SlowLoadDetail {
  index: number;
  /** Milliseconds since the phase started. */
  atMs: number;
  startedAtEpochMs: number;
  path: string;
  loadMs: number;
  /** [path, startTime, responseStart, responseEnd] of every Resource Timing entry, ms since the navigation began. */
  timings: [string, number, number, number][];
  /** The worker's decisions of the load: [ms since the load began, path, served by, status, [server, reason, outcome, started after, ttfb, timeout]…]. */
  decisions: unknown[];
  /** The worker's other events of the load (failovers, resumes, decisions at the head, probes), ms since the load began. */
  events: unknown[];
}

export interface LoopResult {
  loads: PageLoadResult[];
  counters: CounterTotals;
  /** Failovers by cause and body resumes, from the worker's event log. */
  events: EventTally;
  /** Requests served per replica origin, from the worker's decisions. */
  servedBy: Record<string, number>;
  failures: FailedLoadDetail[];
  slowLoads: SlowLoadDetail[];
  durationMs: number;
  /** The loop stopped at its deadline before its count. */
  timedOut: boolean;
}

export interface LoopOptions {
  page: Page;
  logicalOrigin: string;
  paths: readonly string[];
  loads: number;
  deadlineMs: number;
  loadBoundMs: number;
  expected: { bigSha256: string; bigBytes: number };
  label: string;
  /** The emulators' incidents between two wall-clock times, for the account of a failed load. */
  incidents?: (fromEpochMs: number, toEpochMs: number) => LinkIncident[];
  /** Failed loads kept with the worker's account (the rest are counted only). */
  maxFailureDetails?: number;
  /** Loads slower than this (ms) are kept with the worker's account (slowLoads; at most maxSlowDetails). */
  traceSlowerThanMs?: number;
  maxSlowDetails?: number;
}

/** The worker's account of one load, compact (SlowLoadDetail). */
function slowLoadDetail(index: number, phaseStartMs: number, result: PageLoadResult, state: Awaited<ReturnType<typeof controllerState>>): SlowLoadDetail {
  const since = result.startedAtMs;
  const path = (url: string): string => {
    try {
      const parsed = new URL(url);
      return `${parsed.host.split('.')[0]}${parsed.pathname}`;
    } catch {
      return url;
    }
  };
  const name = (server: string): string => path(server).replace(/\/$/, '');
  const decisions = (state?.decisions ?? [])
    .filter((decision) => decision.atMs >= since)
    .map((decision) => [
      Math.round(decision.atMs - since),
      new URL(decision.logicalUrl).pathname,
      decision.servedBy === undefined ? null : name(decision.servedBy),
      decision.status ?? null,
      Math.round(decision.totalMs),
      ...decision.attempts.map((attempt) => [name(attempt.server), attempt.reason, attempt.timedOut === true ? `${attempt.outcome}+timedOut` : attempt.outcome, attempt.startedAfterMs, attempt.ttfbMs ?? null, attempt.timeoutMs]),
    ]);
  const events = (state?.events ?? [])
    .filter((event) => event.atMs >= since && event.type !== 'decision' && event.type !== 'sample' && event.type !== 'bindings')
    .map((event) => ({ ...event, atMs: Math.round(event.atMs - since) }));
  return { index, atMs: result.startedAtMs - phaseStartMs, startedAtEpochMs: result.startedAtMs, path: result.path, loadMs: result.loadMs ?? -1, timings: result.timings ?? [], decisions, events };
}

export async function runLoadLoop(options: LoopOptions): Promise<LoopResult> {
  const { page } = options;
  const counters = new CounterTotals();
  const events = new EventTally();
  const servedBy: Record<string, number> = {};
  const failures: FailedLoadDetail[] = [];
  const slowLoads: SlowLoadDetail[] = [];
  const loads: PageLoadResult[] = [];
  const startedAtMs = Date.now();
  let lastDecisionId = 0;
  const initial = await controllerState(page);
  if (initial) {
    counters.add(initial.counters);
    events.add(initial.events, false);
    lastDecisionId = Math.max(0, ...initial.decisions.map((decision) => decision.id));
  }
  let timedOut = false;
  for (let index = 0; index < options.loads; index++) {
    if (Date.now() > options.deadlineMs) {
      timedOut = true;
      break;
    }
    const path = options.paths[index % options.paths.length]!;
    const result = await loadPage(page, `${options.logicalOrigin}${path}`, options.expected, options.loadBoundMs);
    const endedAtEpochMs = Date.now();
    loads.push(result);
    const state = await controllerState(page);
    if (state) {
      counters.add(state.counters);
      events.add(state.events);
      const newestId = Math.max(0, ...state.decisions.map((decision) => decision.id));
      if (newestId < lastDecisionId) lastDecisionId = 0; // a restarted worker numbers from 1 again
      for (const decision of state.decisions) {
        if (decision.id <= lastDecisionId || decision.servedBy === undefined) continue;
        servedBy[decision.servedBy] = (servedBy[decision.servedBy] ?? 0) + 1;
      }
      lastDecisionId = newestId;
    }
    const slow = result.loadMs !== undefined && options.traceSlowerThanMs !== undefined && result.loadMs > options.traceSlowerThanMs;
    if (slow && slowLoads.length < (options.maxSlowDetails ?? 60)) slowLoads.push(slowLoadDetail(index, loads[0]!.startedAtMs, result, state));
    if (!result.ok && failures.length < (options.maxFailureDetails ?? 30)) {
      const since = result.startedAtMs - 1_000;
      failures.push({
        index,
        atMs: result.startedAtMs - startedAtMs,
        startedAtEpochMs: result.startedAtMs,
        endedAtEpochMs,
        linkIncidents: options.incidents?.(since, endedAtEpochMs).slice(-40) ?? [],
        path,
        navigationError: result.navigationError,
        resources: result.failedResources.map((failure) => ({ ...failure, ...workerStory(state, failure.url, since) })),
        navigationStory: result.navigationError ? workerStory(state, `${options.logicalOrigin}${path}`, since) : undefined,
      });
    }
    if (!result.ok) {
      const why = result.navigationError ?? result.failedResources.map((failure) => `${new URL(failure.url).pathname}: ${failure.why}`).join('; ');
      console.log(`  [${options.label} #${index}] FAILED ${path}: ${why}`);
    }
    if ((index + 1) % 25 === 0) {
      const failed = loads.filter((load) => !load.ok).length;
      console.log(`  [${options.label}] ${index + 1}/${options.loads} loads, ${failed} failed, ${((Date.now() - startedAtMs) / 1000).toFixed(0)} s`);
    }
  }
  return { loads, counters, events, servedBy, failures, slowLoads, durationMs: Date.now() - startedAtMs, timedOut };
}
