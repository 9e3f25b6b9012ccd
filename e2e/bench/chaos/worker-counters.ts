/**
 * The worker's own account of a phase: its counters (failovers, body resumes, probes…) as
 * the state API reports them, summed over the phase. The state is asked of the page's
 * controller over a MessageChannel (the page script's `webpp.state()` does the same), so it
 * works even on a page whose /webpp.js did not load. The worker keeps its counters in
 * memory: when Chromium restarts an idle worker they start again from 0, so the bench adds
 * up per-load differences and treats a drop as a restart.
 */
import type { Page } from '@playwright/test';
import type { DecisionRecord, WebppEvent, WorkerCounters, WorkerStateSnapshot } from '../../../sw/src/messages.js';

export type { DecisionRecord, WebppEvent, WorkerStateSnapshot };

const STATE_TIMEOUT_MS = 5_000;

/** The controller's state snapshot, or undefined when the page has none or it does not answer. */
export async function controllerState(page: Page): Promise<WorkerStateSnapshot | undefined> {
  try {
    return await page.evaluate(
      (timeoutMs) =>
        new Promise<WorkerStateSnapshot | undefined>((resolve) => {
          const controller = navigator.serviceWorker?.controller;
          if (!controller) return resolve(undefined);
          const channel = new MessageChannel();
          const timer = setTimeout(() => resolve(undefined), timeoutMs);
          channel.port1.onmessage = (message) => {
            clearTimeout(timer);
            resolve(message.data as WorkerStateSnapshot);
          };
          controller.postMessage({ type: 'webpp:state' }, [channel.port2]);
        }),
      STATE_TIMEOUT_MS,
    );
  } catch {
    return undefined;
  }
}

export class CounterTotals {
  readonly totals: Partial<Record<keyof WorkerCounters, number>> = {};
  /** Times the counters went down: the worker was restarted. */
  workerRestarts = 0;
  private last: WorkerCounters | undefined;

  /** Folds in a new snapshot of the counters. */
  add(counters: WorkerCounters): void {
    const previous = this.last;
    const restarted = previous !== undefined && counters.intercepted < previous.intercepted;
    if (restarted) this.workerRestarts += 1;
    for (const key of Object.keys(counters) as (keyof WorkerCounters)[]) {
      const delta = previous === undefined ? 0 : restarted ? counters[key] : counters[key] - previous[key];
      this.totals[key] = (this.totals[key] ?? 0) + Math.max(0, delta);
    }
    this.last = counters;
  }

  get(key: keyof WorkerCounters): number {
    return this.totals[key] ?? 0;
  }
}

/** The worker's account of one logical URL: its recent decisions and the events naming it. */
export function workerStory(state: WorkerStateSnapshot | undefined, url: string, sinceMs: number): { decisions: DecisionRecord[]; events: WebppEvent[] } {
  if (!state) return { decisions: [], events: [] };
  const path = new URL(url).pathname;
  const samePath = (candidate: string): boolean => {
    try {
      return new URL(candidate).pathname === path;
    } catch {
      return false;
    }
  };
  return {
    decisions: state.decisions.filter((decision) => decision.atMs >= sinceMs && samePath(decision.logicalUrl)),
    events: state.events.filter(
      (event) => event.atMs >= sinceMs && event.type !== 'decision' && event.type !== 'sample' && (!('logicalUrl' in event) || samePath(event.logicalUrl)),
    ),
  };
}
