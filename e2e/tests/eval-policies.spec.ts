/**
 * The evaluation policies (sw/src/policies, issue 7) in the real worker, against three real
 * @webpp/origin replicas: each sends requests where its definition says, and nowhere else.
 * Pages choose the policy on the script tag (`data-policy`), as a site would; the baselines
 * run over the fast values of the paper's parameters (the internal override `data-_preset`).
 * No timing assertions: "slow" replicas are made to hang far longer than any wait here.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { expect, test } from '@playwright/test';
import type { Page } from '@playwright/test';
import { Cluster, type ClusterReplica } from '../support/cluster/index.js';
import { openControlled, waitForState, workerState } from '../support/webpp-page.js';
import type { DecisionRecord } from '../support/webpp-page.js';

const FILE_BYTES = 4096;
/** Long enough that a request to a "hanging" replica never answers during a test. */
const HANG_MS = 60_000;

let root: string;
let cluster: Cluster;

test.beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), 'webpp-eval-policies-'));
  mkdirSync(join(root, 'files'));
  writeFileSync(join(root, 'files', 'f.bin'), randomBytes(FILE_BYTES));
  for (const policy of ['single-2', 'random', 'round-robin', 'optimal', 'hedged']) {
    writeFileSync(
      join(root, `${policy}.html`),
      `<!doctype html><html><head><meta charset="utf-8"><title>${policy}</title>` +
        `<script src="/webpp.js" data-policy="${policy}" data-_preset="fast" async></script></head><body><h1>${policy}</h1></body></html>`,
    );
  }
});

test.afterAll(() => {
  rmSync(root, { recursive: true, force: true });
});

test.beforeEach(async () => {
  cluster = await Cluster.start({ root });
});

test.afterEach(async () => {
  await cluster.stop();
});

/** Opens the policy's page, checks the worker runs that policy, and teaches it the bindings. */
async function openWithPolicy(page: Page, policy: string): Promise<void> {
  await openControlled(page, cluster.logicalUrl(`/${policy}.html`));
  await waitForState(page, (state) => state.bindings.count > 0, {
    what: 'bindings learned',
    // An observed same-origin fetch: its bindings header teaches the worker every binding.
    between: async () => void (await page.evaluate(() => fetch(location.pathname, { cache: 'no-store' }).then((r) => r.text()))),
  });
  const state = await workerState(page);
  expect(state.policy).toBe(policy);
  expect(state.configErrors).toEqual([]);
  for (const replica of cluster.replicas) replica.log.length = 0;
}

/** Fetches /files/f.bin?i=<from..from+count-1> one after another; returns each status and body size. */
function fetchFiles(page: Page, count: number, from = 0): Promise<{ status: number; bytes: number }[]> {
  return page.evaluate(
    async ({ count, from }) => {
      const results: { status: number; bytes: number }[] = [];
      for (let i = from; i < from + count; i++) {
        const response = await fetch(`/files/f.bin?i=${i}`, { cache: 'no-store' });
        results.push({ status: response.status, bytes: (await response.arrayBuffer()).byteLength });
      }
      return results;
    },
    { count, from },
  );
}

const fileRequests = (replica: ClusterReplica, method = 'GET'): string[] =>
  replica.log.filter((entry) => entry.method === method && entry.url.startsWith('/files/')).map((entry) => entry.url);

async function fileDecisions(page: Page): Promise<DecisionRecord[]> {
  return (await workerState(page)).decisions.filter((decision) => decision.logicalUrl.includes('/files/f.bin'));
}

const ALL_OK = (count: number) => Array.from({ length: count }, () => ({ status: 200, bytes: FILE_BYTES }));

test('single-2 sends every request to the second replica only, and fails with it (no failover)', async ({ page }) => {
  await openWithPolicy(page, 'single-2');
  const [a, b, c] = cluster.replicas as [ClusterReplica, ClusterReplica, ClusterReplica];
  expect(await fetchFiles(page, 6)).toEqual(ALL_OK(6));
  expect(fileRequests(b)).toEqual([0, 1, 2, 3, 4, 5].map((i) => `/files/f.bin?i=${i}`));
  expect([...fileRequests(a), ...fileRequests(c)]).toEqual([]);
  // A baseline sends no background requests (no refresh, no probe).
  expect(cluster.replicas.flatMap((replica) => fileRequests(replica, 'HEAD'))).toEqual([]);

  await cluster.kill('b');
  const outcome = await page.evaluate(() =>
    fetch('/files/f.bin?i=dead', { cache: 'no-store' }).then(
      (response) => `status ${response.status}`,
      () => 'network error',
    ),
  );
  expect(outcome).toBe('network error');
  expect([...fileRequests(a), ...fileRequests(c)]).toEqual([]);
});

test('round-robin takes the replicas in turn', async ({ page }) => {
  await openWithPolicy(page, 'round-robin');
  expect(await fetchFiles(page, 9)).toEqual(ALL_OK(9));
  const servedBy = (await fileDecisions(page)).map((decision) => decision.servedBy);
  expect(servedBy).toHaveLength(9);
  expect(new Set(servedBy.slice(0, 3)).size).toBe(3);
  for (let i = 3; i < 9; i++) expect(servedBy[i]).toBe(servedBy[i - 3]);
  for (const replica of cluster.replicas) expect(fileRequests(replica)).toHaveLength(3);
  // The policy comes from the policies add-on (another bundle than the worker's): its latency
  // table still shows in the state, with every replica it measured.
  const { table } = await workerState(page);
  expect(Object.keys(table.servers).sort()).toEqual(cluster.replicas.map((replica) => replica.origin).sort());
});

test('random asks exactly one replica per request, and spreads over them', async ({ page }) => {
  await openWithPolicy(page, 'random');
  expect(await fetchFiles(page, 30)).toEqual(ALL_OK(30));
  const decisions = await fileDecisions(page);
  expect(decisions).toHaveLength(30);
  for (const decision of decisions) expect(decision.attempts).toHaveLength(1);
  expect(cluster.replicas.reduce((sum, replica) => sum + fileRequests(replica).length, 0)).toBe(30);
  // All 30 on one replica would happen with probability 3 × 3^-30.
  expect(new Set(decisions.map((decision) => decision.servedBy)).size).toBeGreaterThan(1);
});

test('optimal asks all three replicas at once and serves the first answer', async ({ page }) => {
  await openWithPolicy(page, 'optimal');
  const [a, b, c] = cluster.replicas as [ClusterReplica, ClusterReplica, ClusterReplica];
  a.delayMs = HANG_MS;
  c.delayMs = HANG_MS;
  expect(await fetchFiles(page, 3)).toEqual(ALL_OK(3));
  expect(fileRequests(b)).toEqual([0, 1, 2].map((i) => `/files/f.bin?i=${i}`));
  const decisions = await fileDecisions(page);
  expect(decisions).toHaveLength(3);
  for (const decision of decisions) {
    expect(decision.servedBy).toBe(b.origin);
    expect(decision.attempts.map((attempt) => attempt.server).sort()).toEqual([a.origin, b.origin, c.origin].sort());
    // The others were cancelled once b answered: none was treated as a failure.
    expect(decision.attempts.map((attempt) => attempt.outcome).sort()).toEqual(['cancelled', 'cancelled', 'served']);
    expect(decision.failover).toBe(false);
  }
});

test('hedged asks the second-best replica too when the best has not answered by its p95', async ({ page }) => {
  await openWithPolicy(page, 'hedged');
  const [a, b, c] = cluster.replicas as [ClusterReplica, ClusterReplica, ClusterReplica];
  // b is clearly best; learn it.
  a.delayMs = 150;
  c.delayMs = 150;
  let next = 0;
  await waitForState(
    page,
    (state) => {
      const last = state.decisions.at(-1);
      const bRow = state.servers.find((server) => server.server === b.origin);
      return last?.servedBy === b.origin && last.attempts.length === 1 && (bRow?.sampleCount ?? 0) >= 3;
    },
    { what: 'b preferred', between: async () => void (await fetchFiles(page, 1, next++)) },
  );

  // Now b hangs: the hedge (at b's p95, a few ms here) goes to the next best long before
  // b's timeout (at least the preset's 500 ms floor).
  a.delayMs = 0;
  c.delayMs = 0;
  b.delayMs = HANG_MS;
  expect(await fetchFiles(page, 1, 1_000)).toEqual(ALL_OK(1));
  const decision = (await fileDecisions(page)).at(-1)!;
  expect(decision.logicalUrl).toContain('i=1000');
  expect(decision.attempts).toHaveLength(2);
  const [first, hedge] = decision.attempts as [DecisionRecord['attempts'][number], DecisionRecord['attempts'][number]];
  expect(first).toMatchObject({ server: b.origin, outcome: 'cancelled' });
  expect(hedge.reason).toContain('hedge');
  expect(hedge.outcome).toBe('served');
  expect([a.origin, c.origin]).toContain(decision.servedBy);
  // b's link carried the request (b's delay kept it from reaching the server; the emulator
  // records it once the worker has cancelled it).
  await expect.poll(() => b.linkLog.map((record) => record.url)).toContain('/files/f.bin?i=1000');
});
