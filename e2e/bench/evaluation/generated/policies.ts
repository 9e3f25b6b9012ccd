/**
 * The policies of the generated worlds in Chromium: webpp (the worker's default), webpp-paper
 * (the paper's policy and parameters, through the same worker), freecdn, each replica directly
 * from the page, and optimal-complete (every ratio's denominator). webpp, webpp-paper and
 * freecdn are the three curves of the held-out CDF (issue 22 §3), as in the simulator.
 */
import { withDefaultPolicy } from '../default-policy.js';
import { benchPolicies, peerPolicies } from '../policies.js';
import type { BenchPolicy } from '../policies.js';

export function generatedPolicies(servers: readonly string[]): BenchPolicy[] {
  const all = benchPolicies(servers);
  const complete = all.find((policy) => policy.name === 'optimal-complete')!;
  const paper = all.find((policy) => policy.name === 'webpp-paper')!;
  return [...withDefaultPolicy([paper]), ...peerPolicies(servers), complete];
}
