export { createPolicy, policyNames, registerPolicy } from './registry.js';
export { createTablePolicy } from './table-registry.js';
export {
  WebppPolicy,
  createWebppPolicy,
  WEBPP_DEFAULTS,
  resolveWebppOptions,
  webppOptionsFrom,
  type WebppOptions,
  WEBPP_SNAPSHOT_FORMAT_VERSION,
  type WebppSnapshot,
} from './webpp/index.js';
export { extendedRefreshPolicy } from './extended-refresh.js';
export { hedgedPolicy, type HedgeOptions } from './hedged.js';
export {
  NO_TIMEOUT_MS,
  optimalCompletePolicy,
  optimalPolicy,
  randomPolicy,
  roundRobinPolicy,
  singleServerPolicy,
  type SingleServerOptions,
} from './baselines.js';
export { selectionFrom, tablePolicyParts, type SelectionOptions, type TablePolicy, type TablePolicyParts } from './table-policy.js';
