/**
 * Issue 11's default policy, `webpp`, beside the baselines of policies.ts: added here when
 * that list does not have it yet (the registry has it either way), so the evaluation always
 * reports the worker's default.
 */
import { registryPolicy } from '@webpp/simulator';
import type { BenchPolicy } from './policies.js';

const DEFAULT_POLICY: BenchPolicy = {
  name: 'webpp',
  browser: { mode: 'worker', workerParams: { policy: 'webpp' } },
  simulated: () => registryPolicy('webpp', {}, 'webpp'),
  description: 'the worker\'s default policy (issue 11): size-aware expected times from time-decayed estimates, budgeted hedging, budgeted refreshes, ejection with jittered exponential probes (docs/selection.md)',
};

/** `policies` with `webpp` in it, before the paper's policies. */
export function withDefaultPolicy(policies: readonly BenchPolicy[]): BenchPolicy[] {
  if (policies.some((policy) => policy.name === DEFAULT_POLICY.name)) return [...policies];
  const at = policies.findIndex((policy) => policy.name === 'webpp-paper');
  const list = [...policies];
  list.splice(at === -1 ? list.length : at, 0, DEFAULT_POLICY);
  return list;
}
