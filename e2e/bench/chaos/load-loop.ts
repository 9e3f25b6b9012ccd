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

export interface LoopResult {
  loads: PageLoadResult[];
  counters: CounterTotals;
  /** Failovers by cause and body resumes, from the worker's event log. */
  events: EventTally;
  /** Requests served per replica origin, from the worker's decisions. */
  servedBy: Record<string, number>;
  failures: FailedLoadDetail[];
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
}

export async function runLoadLoop(options: LoopOptions): Promise<LoopResult> {
  const { page } = options;
  const counters = new CounterTotals();
  const events = new EventTally();
  const servedBy: Record<string, number> = {};
  const failures: FailedLoadDetail[] = [];
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
  return { loads, counters, events, servedBy, failures, durationMs: Date.now() - startedAtMs, timedOut };
}
