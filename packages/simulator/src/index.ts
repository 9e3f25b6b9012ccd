/**
 * @webpp/simulator: a discrete-event simulator that runs @webpp/core's extended Refresh
 * algorithm (and baseline policies) over @webpp/netem scenario files on a virtual clock.
 */
export { EventQueue, type TimerHandle } from './event-queue.js';
export {
  EXCHANGE_PURPOSES,
  SimulatedNetwork,
  emptyCounts,
  type Exchange,
  type ExchangeCounts,
  type ExchangeHandle,
  type ExchangeHandlers,
  type ExchangePurpose,
  type SimulatedNetworkOptions,
} from './network.js';
export type { CancelRequest, FailureReason, LogicalRequest, Policy, PolicyClient, PolicyEnvironment, PolicyObserver, PolicyRun, RequestResult } from './policy.js';
export { oraclePolicy } from './policies/oracle.js';
export {
  hedgedPolicy,
  optimalFirstHeadPolicy,
  optimalPolicy,
  randomPolicy,
  registryPolicy,
  roundRobinPolicy,
  singleServerPolicy,
  webppFastPolicy,
  webppPaperPolicy,
  webppPolicy,
  type HedgeOptions,
  type WebppPolicyOptions,
} from './policies/engine-policies.js';
export { ENGINE_EPOCH_MS, enginePolicy, type EnginePolicySpec } from './engine-driver.js';
export { clientDelayFromSamples, constantClientDelay, type ClientDelay, type ClientDelaySample } from './client-delay.js';
export { simulate, type RequestRecord, type SimulationOptions, type SimulationResult, type SizeSummary } from './simulation.js';
export { quantileOfSorted, summarize, type Summary } from './statistics.js';
export {
  STANDARD_POLICY_NAMES,
  comparePolicies,
  improvementOverSingle,
  policyByName,
  standardPolicies,
  webppFastMidBodyPolicy,
  toRows,
  type ComparisonOptions,
  type ImprovementOverSingle,
  type ResultRow,
  type ResultRowCore,
  type ScenarioComparison,
} from './compare.js';
export {
  DEFAULT_SWEEP_BASES,
  DEFAULT_SWEEP_VALUES,
  SWEPT_PARAMETERS,
  runSweep,
  type SweepBase,
  type SweepOptions,
  type SweepProgress,
  type SweepResult,
  type SweepRow,
  type SweepValues,
  type SweptParameter,
} from './sweep.js';
export { comparisonMarkdown, goalLines, sweepMarkdown, type ComparisonReportOptions } from './report.js';
export { runPolicySweep, type PolicySweepOptions, type PolicySweepResult, type PolicySweepRow } from './policy-sweep.js';
export { policySweepMarkdown, policySweepSvg } from './policy-sweep-report.js';
export { ORIGIN_PUSH_DEFAULTS, ServerQueue, ServerQueues, type PushedValue, type QueueingOptions, type ServerCapacity } from './server-queue.js';
export { HERDING_POLICIES, herdingScenario, loadCv, runHerding, type HerdingConfig, type HerdingRow } from './herding.js';
export { herdingSvg } from './herding-plot.js';
export { ConnectionPool, HTTP1_CONNECTIONS_PER_HOST } from './connection-pool.js';
export { SharedLink, type TransferHandle, type TransferSpec } from './shared-link.js';
export { freecdnHostWeight, freecdnPolicy, FREECDN_OPEN_TIMEOUT_MS } from './policies/freecdn.js';
export { runWorld, type WorldRunOptions, type WorldRunResult } from './world-run.js';
export {
  GENERALIZATION_POLICIES,
  bestSingle,
  generalizationPolicies,
  runSeed,
  summarizeRows,
  type GeneralizationRow,
  type GeneralizationWorld,
  type PolicySummary,
  type RatioSummary,
} from './generalization.js';
export { ratioCdfSvg, type CdfSeries } from './generalization-plot.js';
export { generalizationMarkdown, type GeneralizationDocument, type WorstSeed } from './generalization-report.js';
