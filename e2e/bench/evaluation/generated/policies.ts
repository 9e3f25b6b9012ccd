/**
 * The policies of the generated worlds in Chromium: webpp (the worker's default), freecdn,
 * each replica directly from the page, and optimal-complete (every ratio's denominator).
 */
import { withDefaultPolicy } from '../default-policy.js';
import { benchPolicies, peerPolicies } from '../policies.js';
import type { BenchPolicy } from '../policies.js';

export function generatedPolicies(servers: readonly string[]): BenchPolicy[] {
  const complete = benchPolicies(servers).find((policy) => policy.name === 'optimal-complete')!;
  return [...withDefaultPolicy([]), ...peerPolicies(servers), complete];
}
