/**
 * Progress of `npm run bench evaluation` (support/progress.ts): which scenario, which policy
 * is being set up or how far the scenario's run is, the time left, and a one-line summary
 * per finished scenario. The units are expected milliseconds: the scenario's own duration
 * (known), plus estimates of the setup, collection and simulation around it.
 */
import { formatDuration, Progress, type ProgressOptions } from '../support/progress.js';
import type { BrowserScenarioHooks } from './browser-run.js';
import type { ResultRow } from './rows.js';

/**
 * Estimates of the parts around a scenario's run. The full run took 647 s for 4 × 150 s of
 * scenarios (docs/benchmarks/results.md), so about 12 s per scenario of 10 policies go to
 * setup, collection and simulation on a calm machine; a busy one takes longer, and the
 * time left follows the pace measured so far.
 */
export const SETUP_MS_PER_POLICY = 1_500;
export const COLLECT_MS = 1_000;
export const SIMULATE_MS_PER_POLICY = 500;
/** browser-run.ts's default delay between the last setup and the common start. */
const START_DELAY_MS = 1_500;

export interface ScenarioPlan {
  name: string;
  policies: number;
  durationMs: number;
}

/** Expected milliseconds of one scenario, setup to simulation. */
export function scenarioUnits(plan: ScenarioPlan): number {
  return plan.policies * (SETUP_MS_PER_POLICY + SIMULATE_MS_PER_POLICY) + START_DELAY_MS + plan.durationMs + COLLECT_MS;
}

/** "peak (1/4) done in 2 min 41 s: 10 policies, 5402 requests, 1 failed; closest to optimal: hedged ×0.990". */
export function scenarioSummary(part: string, elapsedMs: number, rows: readonly ResultRow[]): string {
  const requests = rows.reduce((sum, row) => sum + row.requests, 0);
  const failed = rows.reduce((sum, row) => sum + row.failed_requests, 0);
  const best = rows.filter((row) => row.policy !== 'optimal' && row.policy !== 'optimal-complete').sort((a, b) => a.relative_to_optimal - b.relative_to_optimal)[0];
  return (
    `${part} done in ${formatDuration(elapsedMs)}: ${rows.length} policies, ${requests} requests, ${failed} failed` +
    (best ? `; closest to optimal-complete: ${best.policy} ×${best.relative_to_optimal.toFixed(3)}` : '')
  );
}

export class EvaluationProgress {
  readonly progress: Progress;
  private scenarioStartedMs = 0;

  constructor(
    private readonly plans: readonly ScenarioPlan[],
    options: Partial<ProgressOptions> = {},
  ) {
    const totalUnits = plans.reduce((sum, plan) => sum + scenarioUnits(plan), 0);
    this.progress = new Progress({ title: 'evaluation', totalUnits, ...options });
  }

  log(line: string): void {
    this.progress.log(line);
  }

  /** Before the first scenario. */
  launchingBrowser(): void {
    this.progress.step('starting Chromium', 0);
  }

  /** "peak (1/4)". */
  part(index: number): string {
    return `${this.plans[index]!.name} (${index + 1}/${this.plans.length})`;
  }

  /** Call as scenario `index` starts: returns the hooks that report its setup and run. */
  scenarioHooks(index: number): BrowserScenarioHooks {
    const part = this.part(index);
    const plan = this.plans[index]!;
    this.scenarioStartedMs = performance.now();
    this.progress.step(`${part}: starting the replica servers`, 0);
    return {
      contextWillPrepare: (policy, policyIndex, count) =>
        this.progress.step(`${part}: setting up ${policy.name} (${policyIndex + 1}/${count})`, SETUP_MS_PER_POLICY),
      workloadWillStart: (startDelayMs, durationMs) =>
        this.progress.step(`${part}: ${plan.policies} policies running`, startDelayMs + durationMs, { expectedMs: startDelayMs + durationMs }),
      workloadDidFinish: () => this.progress.step(`${part}: collecting the worker's events`, COLLECT_MS),
    };
  }

  simulating(index: number, seeds: number): void {
    this.progress.step(`${this.part(index)}: simulating ${this.plans[index]!.policies} policies × ${seeds} seeds`, this.plans[index]!.policies * SIMULATE_MS_PER_POLICY);
  }

  scenarioDone(index: number, rows: readonly ResultRow[]): void {
    this.progress.complete(scenarioSummary(this.part(index), performance.now() - this.scenarioStartedMs, rows));
  }

  close(): void {
    this.progress.close();
  }
}
