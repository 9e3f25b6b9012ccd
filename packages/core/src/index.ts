export type * from './types.js';
export { PAPER_DEFAULTS, FAST_PRESET, resolveSelectionConfig } from './config.js';
export { inverseNormalCdf, percentileToZ } from './normal-quantile.js';
export {
  EFFECTIVE_WINDOW_WEIGHT,
  MIN_SAMPLES_FOR_TIMEOUT,
  ewmaMean,
  ewmaVariance,
  foldSample,
  effectiveSampleWindow,
  effectiveSampleCount,
  percentileOfMeanMs,
  latencyPercentileMs,
  type LatencyMoments,
} from './latency-estimate.js';
export { LatencyTable } from './latency-table.js';
export { rankReplicas, selectReplica, refreshTarget, dueProbes } from './select-replica.js';
export {
  BINDINGS_HEADER,
  CONTROL_HEADER,
  CONTROL_OFF,
  isControlOff,
  isSha256Integrity,
  BINDINGS_FORMAT_VERSION,
  DEFAULT_MAX_HEADER_BYTES,
  DEFAULT_DECODE_MAX_BYTES,
  DEFAULT_MAX_INFLATED_BYTES,
} from './bindings/format.js';
export { encodeBindings, MIN_HEADER_BYTES } from './bindings/encode.js';
export { decodeBindings, decodeBindingsNative } from './bindings/decode.js';
export {
  BindingsIndex,
  serverOf,
  type BindingsIndexJSON,
  type BindingsIndexOptions,
  type ApplyResult,
} from './bindings/bindings-index.js';
export * from './batch/index.js';
export { canonicalUrl, parseUrlSpec, formatUrlSpec, prefixCandidates, type UrlSpec } from './url-spec.js';
export * from './engine/index.js';
export * from './policies/index.js';
export {
  SERVER_TIMING_HEADER,
  SERVER_TIMING_METRIC,
  LOAD_HEADER,
  formatServerTiming,
  parseServerTiming,
  parseServerTimingUtilisation,
  formatLoadHeader,
  parseLoadHeader,
  type PushedLoad,
} from './push/push-headers.js';
export { ServiceTimePush, type ServiceTimePushOptions, type PushedServiceTime } from './push/service-time.js';
export {
  AGGREGATE_HEADER,
  MAX_CLIENT_REPORT_BYTES,
  MAX_CLIENT_REPORT_ROWS,
  formatAggregateHeader,
  parseAggregateHeader,
  encodeClientReport,
  type AggregateHeader,
  type ClientReportRow,
} from './push/aggregate-header.js';
export { WELL_KNOWN_PREFIX, STATIC_BINDINGS_PATH, CLIENT_REPORT_PATH } from './well-known.js';
