/**
 * One generated world in real Chromium (issue 22 §1): every policy in its own browser
 * context, each behind its own emulated replicas (the world's links are shared by a
 * replica's concurrent responses, so policies running at the same time must not share
 * them), all started at the same instant as the world's time 0.
 *
 * Bounds: no page starts after `deadlineMs`, a request gives up after `requestTimeoutMs`;
 * the contexts are set up a few at a time and closed whatever happens.
 */
import type { Browser } from '@playwright/test';
import type { GeneratedWorld } from '@webpp/netem';
import { directOriginOf, prepare } from '../browser-run.js';
import type { PreparedContext } from '../browser-run.js';
import { startBenchCluster } from '../cluster.js';
import type { BenchCluster, PolicyTraffic } from '../cluster.js';
import type { BenchPolicy } from '../policies.js';

/** Browser contexts set up at the same time. */
const SETUP_CONCURRENCY = 3;
/** How long after setup every workload starts. */
const START_DELAY_MS = 1_500;
/** How long the requests still on the wire when the pages are done get to reach the emulators' counts. */
const SETTLE_MS = 1_000;

/** One page request as the page measured it. */
interface GeneratedRecord {
  client: number;
  page: number;
  url: string;
  sizeBytes: number;
  responseMs: number;
  ok: boolean;
  error: string | null;
}

/** One page load: its resources all at once, from its start to its last body. */
interface PageLoad {
  client: number;
  page: number;
  pageMs: number;
  ok: boolean;
}

export interface GeneratedPolicyRun {
  policy: string;
  records: GeneratedRecord[];
  pages: PageLoad[];
  traffic: PolicyTraffic;
}

export interface WorldRunOptions {
  browser: Browser;
  world: GeneratedWorld;
  policies: readonly BenchPolicy[];
  deadlineMs: number;
  requestTimeoutMs: number;
  log?: (line: string) => void;
}

interface BenchWindow {
  __webppBench: { runPages(options: unknown): Promise<{ records: GeneratedRecord[]; pages: PageLoad[] }> };
}

/** Every URL of the world's workload once, with its size. */
function worldResources(world: Pick<GeneratedWorld, 'workload'>): { url: string; sizeBytes: number }[] {
  const byUrl = new Map<string, number>();
  for (const resource of world.workload.clients.flat(2)) byUrl.set(resource.url, resource.sizeBytes);
  return [...byUrl].map(([url, sizeBytes]) => ({ url, sizeBytes }));
}

export async function runWorld(options: WorldRunOptions): Promise<GeneratedPolicyRun[]> {
  const { browser, world, policies } = options;
  const resources = worldResources(world);
  const clusters: BenchCluster[] = [];
  const prepared: (PreparedContext & { cluster: BenchCluster })[] = [];
  try {
    let next = 0;
    const slots: (PreparedContext & { cluster: BenchCluster })[] = [];
    const setUp = async (): Promise<void> => {
      for (let index = next++; index < policies.length; index = next++) {
        const cluster = await startBenchCluster({ scenario: world.scenario, resources });
        clusters.push(cluster);
        const context = await prepare(browser, cluster, policies[index]!);
        slots[index] = { ...context, cluster };
        prepared.push(slots[index]!);
      }
    };
    await Promise.all(Array.from({ length: Math.min(SETUP_CONCURRENCY, policies.length) }, setUp));
    options.log?.(`  ${policies.length} contexts ready`);

    const startAtEpochMs = Date.now() + START_DELAY_MS;
    const restarted = new Promise<void>((resolve) =>
      setTimeout(() => {
        for (const { cluster } of slots) cluster.restart();
        resolve();
      }, Math.max(0, startAtEpochMs - Date.now())),
    );
    const clients = world.workload.clients.map((pages) => pages.map((page) => page.map(({ url, sizeBytes }) => ({ url, sizeBytes }))));
    const runs = slots.map(async ({ policy, page, cluster }) => {
      const result = await page.evaluate((runOptions) => (window as unknown as BenchWindow).__webppBench.runPages(runOptions), {
        tag: policy.name,
        mode: policy.browser.mode,
        clients,
        durationMs: options.deadlineMs,
        requestTimeoutMs: options.requestTimeoutMs,
        thinkTimeMs: world.workload.thinkTimeMs,
        startAtEpochMs,
        origins: Object.values(cluster.origins),
        directOrigin: directOriginOf(policy, cluster),
      });
      return { policy: policy.name, records: result.records, pages: result.pages, cluster };
    });
    await restarted;
    const finished = await Promise.all(runs);
    await new Promise((resolve) => setTimeout(resolve, SETTLE_MS));
    return finished.map(({ cluster, ...run }) => ({ ...run, traffic: cluster.traffic(run.policy) }));
  } finally {
    await Promise.all(prepared.map(({ context }) => context.close().catch(() => undefined)));
    await Promise.all(clusters.map((cluster) => cluster.close().catch(() => undefined)));
  }
}
