/**
 * One scenario in real Chromium: one browser context per policy (its own Service Worker,
 * IndexedDB and connection pool), every context set up first, then all workloads started at
 * the same instant as the scenario's time 0, so that every policy meets the same network.
 */
import { readFileSync } from 'node:fs';
import type { Browser, BrowserContext, Page } from '@playwright/test';
import type { ResolvedWorkload } from '@webpp/netem';
import type { BenchCluster } from './cluster.js';
import type { BenchPolicy } from './policies.js';
import { FREECDN_LOADER_PATH } from './freecdn.js';

/** How long the background requests of the last page requests get to end before the events are read. */
const SETTLE_MS = 1_500;
/** Browser contexts set up at the same time. */
const SETUP_CONCURRENCY = 3;

const PAGE_WORKLOAD = readFileSync(new URL('./page-workload.js', import.meta.url), 'utf8');

/** What the page measured for one request. */
export interface PageRecord {
  client: number;
  index: number;
  sizeBytes: number;
  /** Since the workload started (scenario time). */
  startMs: number;
  responseMs: number;
  ok: boolean;
  error: string | null;
}

/** One bound request as the worker reported it (its live 'decision' event). */
export interface WorkerDecision {
  url: string;
  outcome: 'served' | 'failed' | 'aborted';
  servedBy: string | null;
  attempts: { server: string; outcome: string; startedAfterMs: number; ttfbMs: number | null }[];
}

interface WorkerEvents {
  decisions: WorkerDecision[];
  refreshes: number;
  probes: number;
  failedRefreshes: number;
  failedProbes: number;
  /** Bodies resumed from another replica after breaking off (one Range request each, at least). */
  resumes: number;
  failedResumes: number;
}

export interface BrowserPolicyRun {
  policy: BenchPolicy;
  records: PageRecord[];
  /** Null for the no-worker policy. */
  worker: WorkerEvents | null;
  elapsedMs: number;
  configErrors: string[];
}

interface BenchWindow {
  __webppBench?: {
    listen(tag: string): boolean;
    events(): WorkerEvents;
    run(options: unknown): Promise<{ records: PageRecord[]; elapsedMs: number }>;
  };
  webpp?: {
    controlled(): Promise<void>;
    state(): Promise<{ bindings: { count: number }; configErrors: string[]; policy: string; preset: string }>;
  };
}

/** Bounded polling in the page: resolves when `predicate` holds, throws after `timeoutMs`. */
async function pollPage<T>(page: Page, probe: () => Promise<T>, predicate: (value: T) => boolean, what: string, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (predicate(value)) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}: ${JSON.stringify(value)}`);
    await page.waitForTimeout(100);
  }
}

export interface PreparedContext {
  policy: BenchPolicy;
  context: BrowserContext;
  page: Page;
  configErrors: string[];
}

/**
 * freecdn's install, as on any freecdn site: the loader registers itself as the worker and
 * reloads the page when the worker is ready. When the install takes over 3 s (a slow link or
 * a loaded machine) the loader gives up on this page view (it loads its fail script) and the
 * next view is controlled: the harness then reloads the page itself, as a returning visitor
 * would. `/freecdn-update` answers once the worker has loaded its main script and the
 * manifest (before that it holds every request).
 */
async function installFreecdn(page: Page, policy: BenchPolicy): Promise<void> {
  await page.addScriptTag({ url: FREECDN_LOADER_PATH });
  // (The page may be reloading under these probes: a probe that fails is retried.)
  await pollPage(
    page,
    () => page.evaluate(async () => (await navigator.serviceWorker.getRegistration())?.active?.state === 'activated').catch(() => false),
    (activated) => activated,
    `${policy.name}: freecdn's worker activated`,
    60_000,
  );
  await page.waitForLoadState('load');
  const controlled = (): Promise<boolean> => page.evaluate(() => navigator.serviceWorker.controller !== null).catch(() => false);
  if (!(await controlled())) await page.reload({ waitUntil: 'load' }).catch(() => undefined);
  await pollPage(page, controlled, (yes) => yes, `${policy.name}: the page controlled by freecdn's worker`);
  const answer = await page.evaluate(async () => (await fetch('/freecdn-update', { cache: 'no-store' })).text());
  if (!answer.startsWith('updated.')) throw new Error(`${policy.name}: freecdn's worker is not running (its answer: ${answer.slice(0, 80)})`);
}

/** Opens the bench page, registers the worker with the policy and teaches it the bindings; the latency table stays empty. */
export async function prepare(browser: Browser, cluster: Pick<BenchCluster, 'logicalOrigin'>, policy: BenchPolicy): Promise<PreparedContext> {
  const context = await browser.newContext({ serviceWorkers: 'allow' });
  const page = await context.newPage();
  await page.goto(`${cluster.logicalOrigin}/bench.html`);
  if (policy.browser.mode === 'freecdn') await installFreecdn(page, policy);
  await page.addScriptTag({ content: PAGE_WORKLOAD });
  if (policy.browser.mode !== 'worker') return { policy, context, page, configErrors: [] };

  const query = new URLSearchParams(policy.browser.workerParams).toString();
  await page.addScriptTag({ url: `/webpp.js?${query}` });
  await page.waitForFunction(() => (window as unknown as BenchWindow).webpp !== undefined);
  await page.evaluate(() => (window as unknown as BenchWindow).webpp!.controlled());
  // An observed same-origin fetch: its response's bindings header (the '/*' prefix binding)
  // teaches the worker the bindings without a latency sample.
  const state = await pollPage(
    page,
    () =>
      page.evaluate(async () => {
        await fetch('/bench.html', { cache: 'no-store' });
        return (window as unknown as BenchWindow).webpp!.state();
      }),
    (snapshot) => snapshot.bindings.count > 0,
    `${policy.name}: bindings learned`,
  );
  const expected = policy.browser.workerParams['policy'];
  if (state.policy !== expected) throw new Error(`${policy.name}: the worker runs policy "${state.policy}", not "${expected}" (config errors: ${state.configErrors.join('; ')})`);
  const listening = await page.evaluate((tag) => (window as unknown as BenchWindow).__webppBench!.listen(tag), policy.name);
  if (!listening) throw new Error(`${policy.name}: could not listen to the worker's events`);
  return { policy, context, page, configErrors: state.configErrors };
}

export interface BrowserScenarioOptions {
  browser: Browser;
  cluster: BenchCluster;
  policies: readonly BenchPolicy[];
  workload: ResolvedWorkload;
  /** Safety bound per client (the workload is time-bound). */
  maxRequestsPerClient: number;
  /** How long after setup all workloads start together. */
  startDelayMs?: number;
  log?: (line: string) => void;
  /** Lifecycle callbacks, for progress reports. */
  hooks?: BrowserScenarioHooks;
}

export interface BrowserScenarioHooks {
  /** Before a policy's context is set up, one after another (index from 0). */
  contextWillPrepare?(policy: BenchPolicy, index: number, count: number): void;
  /** Every context is ready; all workloads start together after startDelayMs and run for durationMs. */
  workloadWillStart?(startDelayMs: number, durationMs: number): void;
  /** Every workload finished; the worker's events are being collected. */
  workloadDidFinish?(): void;
}

export async function runBrowserScenario(options: BrowserScenarioOptions): Promise<BrowserPolicyRun[]> {
  const { browser, cluster, policies, workload } = options;
  const log = options.log ?? (() => undefined);
  const prepared: PreparedContext[] = [];
  try {
    // A few at a time: nobody measures the setup, and nine scenarios × eleven contexts one
    // by one took about a fifth of a run's wall time; more at once would only queue on 2 cores.
    const slots: PreparedContext[] = [];
    let next = 0;
    const worker = async (): Promise<void> => {
      for (let index = next++; index < policies.length; index = next++) {
        const policy = policies[index]!;
        options.hooks?.contextWillPrepare?.(policy, index, policies.length);
        const context = await prepare(browser, cluster, policy);
        slots[index] = context;
        prepared.push(context);
      }
    };
    await Promise.all(Array.from({ length: Math.min(SETUP_CONCURRENCY, policies.length) }, worker));
    // In the policies' order again (prepared holds them in the order they got ready, for cleanup).
    prepared.splice(0, prepared.length, ...slots);
    log(`  ${prepared.length} contexts ready (${Object.values(cluster.origins).join(', ')})`);

    const startDelayMs = options.startDelayMs ?? 1_500;
    options.hooks?.workloadWillStart?.(startDelayMs, workload.durationMs);
    const startAtEpochMs = Date.now() + startDelayMs;
    const origins = Object.values(cluster.origins);
    const restart = new Promise<void>((resolve) =>
      setTimeout(() => {
        cluster.restart();
        resolve();
      }, Math.max(0, startAtEpochMs - Date.now())),
    );
    const runs = prepared.map(async ({ policy, page, configErrors }) => {
      const result = await page.evaluate(
        (runOptions) => (window as unknown as BenchWindow).__webppBench!.run(runOptions),
        {
          tag: policy.name,
          mode: policy.browser.mode,
          clients: workload.clients,
          fileSizesBytes: workload.fileSizesBytes,
          durationMs: workload.durationMs,
          maxRequestsPerClient: options.maxRequestsPerClient,
          requestTimeoutMs: workload.requestTimeoutMs,
          failurePauseMs: workload.failurePauseMs,
          thinkTimeMs: workload.thinkTimeMs,
          startAtEpochMs,
          origins,
          directOrigin: directOriginOf(policy, cluster),
        },
      );
      return { policy, page, configErrors, ...result };
    });
    await restart;
    const finished = await Promise.all(runs);
    options.hooks?.workloadDidFinish?.();

    // Live events arrive in batches shortly after each request, and the background requests
    // of the last requests (refreshes, probes) end after the workload: wait 1.5 s, then until
    // every request's decision is in and the background counts stop changing (bounded), so
    // that the extra-request counts are complete.
    await new Promise((resolve) => setTimeout(resolve, SETTLE_MS));
    const results: BrowserPolicyRun[] = [];
    for (const run of finished) {
      let worker: WorkerEvents | null = null;
      if (run.policy.browser.mode === 'worker') {
        const pageRequests = run.records.length;
        let lastBackground = -1;
        worker = await pollPage(
          run.page,
          () => run.page.evaluate(() => (window as unknown as BenchWindow).__webppBench!.events()),
          (events) => {
            const background = events.refreshes + events.probes + events.resumes;
            const settled = events.decisions.length >= pageRequests && background === lastBackground;
            lastBackground = background;
            return settled;
          },
          `${run.policy.name}: a decision for each of ${pageRequests} requests`,
          5_000,
        ).catch(() => run.page.evaluate(() => (window as unknown as BenchWindow).__webppBench!.events()));
      }
      results.push({ policy: run.policy, records: run.records, worker, elapsedMs: run.elapsedMs, configErrors: run.configErrors });
    }
    return results;
  } finally {
    await Promise.all(prepared.map(({ context }) => context.close().catch(() => undefined)));
  }
}

/** The one replica a `direct` policy fetches from, or undefined. */
export function directOriginOf(policy: BenchPolicy, cluster: Pick<BenchCluster, 'origins'>): string | undefined {
  return policy.browser.mode === 'direct' ? cluster.origins[policy.browser.server] : undefined;
}
