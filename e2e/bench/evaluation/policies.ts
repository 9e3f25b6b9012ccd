/**
 * The policies the evaluation compares (issue 7), how the browser runs each one, and what
 * the simulator runs beside it. Report names follow the simulator's (single-A, webpp-fast…).
 */
import { FAST_PRESET, PAPER_DEFAULTS } from '@webpp/core';
import {
  optimalFirstHeadPolicy,
  freecdnPolicy,
  optimalPolicy as optimalCompletePolicy,
  randomPolicy,
  roundRobinPolicy,
  singleServerPolicy,
  webppPolicy,
} from '@webpp/simulator';
import type { Policy } from '@webpp/simulator';

export interface BenchPolicy {
  /** Report name, e.g. "single-B", "webpp-fast". */
  name: string;
  /** How the browser context runs it. */
  browser:
    | { mode: 'worker'; workerParams: Record<string, string> }
    /** No worker: the page fetches every replica itself; the first complete body wins. */
    | { mode: 'parallel' }
    /** No worker: the page fetches every request from this one replica (scenario server name). */
    | { mode: 'direct'; server: string }
    /** freecdn-js's loader and worker (freecdn.ts), every replica a mirror of each file. */
    | { mode: 'freecdn' };
  /** The same policy in the simulator. */
  simulated: () => Policy;
  /** One line for the report. */
  description: string;
}

/**
 * Both sides run @webpp/core's client engine with the registry's policies; the simulator
 * resumes a body that breaks off mid-stream from the rest of the plan, as the worker does
 * (sw/src/resumable-body.ts).
 */
const webppPaperSimulated = (): Policy => webppPolicy({ name: 'webpp-paper', base: PAPER_DEFAULTS, midBodyFailover: true });
const webppFastSimulated = (): Policy => webppPolicy({ name: 'webpp-fast', base: FAST_PRESET, midBodyFailover: true });
const hedgedSimulated = (): Policy => webppPolicy({ name: 'hedged', base: FAST_PRESET, hedge: {}, midBodyFailover: true });

/**
 * `servers` in the scenario's order, which is also the replication directory's order, so
 * the worker's `single-<n>` is the scenario's n-th server.
 */
export function benchPolicies(servers: readonly string[]): BenchPolicy[] {
  // The baselines run over the fast values of the paper's parameters (an internal override).
  const fast = { _preset: 'fast' };
  return [
    ...peerPolicies(servers),
    ...servers.map((server, i) => ({
      name: `single-${server}`,
      browser: { mode: 'worker' as const, workerParams: { ...fast, policy: `single-${i + 1}` } },
      simulated: () => singleServerPolicy(server),
      description: `every request to ${server} (worker policy single-${i + 1}); no failover`,
    })),
    {
      name: 'random',
      browser: { mode: 'worker', workerParams: { ...fast, policy: 'random' } },
      simulated: randomPolicy,
      description: 'a random replica per request; no failover',
    },
    {
      name: 'round-robin',
      browser: { mode: 'worker', workerParams: { ...fast, policy: 'round-robin' } },
      simulated: roundRobinPolicy,
      description: 'replicas in turn; no failover',
    },
    {
      name: 'webpp-paper',
      browser: { mode: 'worker', workerParams: { policy: 'paper' } },
      simulated: webppPaperSimulated,
      description: 'the worker\'s default policy (extended Refresh), the paper\'s parameters (r 0.95, TTL 41 min, F 28.8 h, S 55, T 99.9)',
    },
    {
      name: 'webpp-fast',
      browser: { mode: 'worker', workerParams: { policy: 'fast' } },
      simulated: webppFastSimulated,
      description: 'the paper\'s policy with the fast values, policy=fast (TTL 20 s, F 2 s doubling to 60 s, timeout floor 500 ms)',
    },
    {
      name: 'hedged',
      browser: { mode: 'worker', workerParams: { ...fast, policy: 'hedged' } },
      simulated: hedgedSimulated,
      description: 'webpp-fast + a second request to the next best when no response head by the best one\'s p95',
    },
    {
      name: 'optimal',
      browser: { mode: 'worker', workerParams: { ...fast, policy: 'optimal' } },
      simulated: optimalFirstHeadPolicy,
      description: 'worker asks every replica at once; the first response head wins, the rest are cancelled',
    },
    {
      name: 'optimal-complete',
      browser: { mode: 'parallel' },
      simulated: () => ({ ...optimalCompletePolicy(), name: 'optimal-complete' }),
      description: 'page asks every replica at once; the first complete body wins (paper Section 6.1 to the letter)',
    },
  ];
}

/**
 * The real peers of issue 22 §1: each replica fetched directly by the page (no worker: the
 * baseline "best single replica, measured directly from the page, with no worker, in the
 * same run"), and freecdn (npm freecdn-js, its own loader and worker).
 */
export function peerPolicies(servers: readonly string[]): BenchPolicy[] {
  return [
    ...servers.map((server) => ({
      name: `${DIRECT_PREFIX}${server}`,
      browser: { mode: 'direct' as const, server },
      simulated: () => ({ ...singleServerPolicy(server), name: `${DIRECT_PREFIX}${server}` }),
      description: `no worker: the page fetches every request from ${server} directly; no failover`,
    })),
    {
      name: 'freecdn',
      browser: { mode: 'freecdn' },
      simulated: freecdnPolicy,
      description: 'freecdn-js 0.4.1, its loader and worker; every replica a mirror of each file (a cumulative mean of first-byte times per host, sequential failover)',
    },
  ];
}

/** The name prefix of the direct single-replica policies. */
export const DIRECT_PREFIX = 'direct-';
