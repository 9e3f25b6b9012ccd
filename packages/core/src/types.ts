/**
 * Shared types of @webpp/core. This file is the contract between the core, the
 * Service Worker (sw/), the origin (origin/), the tests and the simulator.
 */

/** A replica server, identified by its origin: scheme://host:port, e.g. "http://b.localhost:8082". */
export type ServerId = string;

/** Milliseconds since the epoch (or any monotonic origin); injectable for tests and the simulator. */
export type Clock = () => number;

/** Uniform random numbers in [0, 1); injectable for tests and the simulator. */
export type RandomSource = () => number;

/** Parameters of the extended Refresh algorithm (Web++ paper Section 4.1, Figure 10). */
export interface SelectionConfig {
  /** r in eq. (2) and (3): weight of the newest sample, in (0, 1]. */
  ewmaWeight: number;
  /** TTL: a server's entry expires this long after its last sample. */
  ttlMs: number;
  /** F: default interval before re-probing a failed server; doubles per probe, reset on response. */
  probeIntervalMs: number;
  /** Upper bound for the doubling F, so that backoff never overflows. */
  maxProbeIntervalMs: number;
  /** S: the percentile (0 < S < 100) minimised by selection, eq. (1). */
  selectPercentile: number;
  /** T: the percentile (0 < T < 100) of a server's latency used as its request timeout. */
  timeoutPercentile: number;
  /** Lower bound on any timeout, so a young or very steady estimate cannot cause false timeouts. */
  timeoutFloorMs: number;
  /**
   * A second lower bound, relative: no timeout is shorter than this multiple of the server's
   * mean latency (0 disables it). Needed because eq. (3) with r near 1 underestimates the
   * variance by orders of magnitude (docs/selection.md). Optional; the presets set 3.
   */
  timeoutMeanMultiple?: number;
  /** Upper bound on any timeout, so a wild estimate cannot make a dead server hang a page. */
  timeoutCeilingMs: number;
  /** Timeout used while a server has too few samples to estimate its variance. */
  initialTimeoutMs: number;
}

export type ServerState = 'available' | 'failed';

/** One row of the latency table: what a client knows about one server. Plain JSON. */
export interface ServerEstimate {
  server: ServerId;
  /** EWMA of time-to-first-byte, eq. (2). */
  meanMs: number;
  /** EWMA variance of time-to-first-byte, eq. (3), in ms². */
  varianceMs2: number;
  /** Samples folded into the estimate so far (n in eq. (1) is derived from it; see docs). */
  sampleCount: number;
  /** Clock time of the last latency sample; 0 when there has been none. */
  lastSampleAtMs: number;
  state: ServerState;
  /** Current F for this server: doubles on every probe sent while failed. */
  probeIntervalMs: number;
  /** While failed: when the next asynchronous probe is due. 0 while available. */
  nextProbeAtMs: number;
  /** Clock time of the last change to this row; newer rows win when tables are merged. */
  updatedAtMs: number;
}

/** The serialised latency table, as stored in IndexedDB. */
export interface LatencyTableJSON {
  formatVersion: 1;
  servers: Record<ServerId, ServerEstimate>;
}

/** Why a server was chosen. */
export type SelectionReason = 'random-all-expired' | 'lowest-percentile' | 'last-resort-failed';

/** One planned attempt: the server to ask and how long to wait for its first byte. */
export interface ReplicaAttempt {
  server: ServerId;
  timeoutMs: number;
  reason: SelectionReason;
}

/**
 * One binding: a logical URL and the physical URLs of its replicas (paper Section 2).
 * Exact bindings name one resource. Prefix bindings (directory wildcards such as
 * "/images/*") have a logical URL ending in "/" and map every URL below it: the part
 * after the logical prefix is appended to each physical prefix.
 */
export interface Binding {
  /** Absolute logical URL, e.g. "http://a.localhost:8081/img/cat.jpg" or, for a prefix, ".../images/". */
  logical: string;
  /** True for a prefix (wildcard) binding. */
  prefix: boolean;
  /** Absolute physical URLs (or physical prefixes), most preferred first as the origin sees it. */
  replicas: string[];
  /** Optional validator (strong ETag or content digest) of the resource, for logical-URL caching. */
  validator?: string;
  /**
   * Optional size of the resource's body in bytes (exact bindings only): a hint for replica
   * selection, which ranks small resources by first byte and large ones by total time
   * (docs/protocol.md, "Binding sizes").
   */
  sizeBytes?: number;
}

/** What one bindings header carries. */
export interface BindingsDocument {
  /** Monotonic version of the replication directory that produced these bindings. */
  directoryVersion: number;
  bindings: Binding[];
  /**
   * Optional SHA-256 digests of resources (docs/protocol.md, "Content digests"): what the
   * bytes served for a logical URL must hash to. A digest applies to one logical URL, which
   * may be covered by an exact or a prefix binding.
   */
  digests?: ContentDigest[];
}

/** The SRI-style digest of the body served for one logical URL. */
export interface ContentDigest {
  /** Absolute logical URL (never a prefix). */
  logical: string;
  /** "sha256-" + standard base64 of the 32-byte SHA-256 of the body (as in SRI). */
  integrity: string;
}

/** Machine-readable reason a bindings header was rejected. */
export type BindingsErrorCode =
  | 'EMPTY'
  | 'TOO_LARGE'
  | 'UNSUPPORTED_VERSION'
  | 'MALFORMED'
  | 'TRUNCATED'
  | 'BAD_COMPRESSION'
  | 'BAD_URL';

export interface BindingsError {
  code: BindingsErrorCode;
  message: string;
}

export type DecodeResult =
  | { ok: true; document: BindingsDocument }
  | { ok: false; error: BindingsError };

export interface EncodeOptions {
  /** Header byte budget; bindings that do not fit are dropped (see docs/protocol.md). */
  maxBytes?: number;
  /** 'auto' (default) compresses only when that saves bytes. */
  compression?: 'auto' | 'never' | 'always';
}

export interface DecodeOptions {
  /** Longest header value accepted, in bytes (default 64 KiB); longer input is TOO_LARGE. */
  maxBytes?: number;
  /** Largest (decompressed) JSON payload accepted, in bytes (default 1 MiB): the zip-bomb bound. */
  maxInflatedBytes?: number;
}

export interface EncodeResult {
  /** The header value: header-safe ASCII. */
  value: string;
  compressed: boolean;
  /** How many bindings were left out to stay within maxBytes. */
  droppedBindings: number;
  /** How many digests were left out (their binding was dropped, or no room was left). */
  droppedDigests: number;
}

/** A logical URL resolved through a BindingsIndex: where its replicas are. */
export interface ResolvedBinding {
  logical: string;
  /** Physical URLs of this very resource, one per replica. */
  physicalUrls: string[];
  /** The binding that matched (exact, or the longest matching prefix). */
  binding: Binding;
  directoryVersion: number;
}
