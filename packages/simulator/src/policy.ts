/** The shape of a replica-selection policy in the simulator. */
import type { RandomSource } from '@webpp/netem/model';
import type { EventQueue } from './event-queue.js';
import type { SimulatedNetwork } from './network.js';

/** One request of the workload: a GET for a resource of `sizeBytes`, replicated on every server. */
export interface LogicalRequest {
  client: number;
  /** The client's request number, from 0. */
  index: number;
  sizeBytes: number;
  /** The resource's URL path (generated worlds); default `sim:<sizeBytes>`, one URL per size. */
  url?: string;
  /**
   * Whether the client may plan with sizeBytes. False for a client that learns sizes from
   * responses, as the worker does when the bindings carry none, before its first response
   * for this resource (SimulationOptions.learnSizes). Default true.
   */
  sizeKnown?: boolean;
  /** Common-random-numbers key: the same request under every policy draws the same luck. */
  key: string;
}

/** Why a request failed. */
export type FailureReason =
  /** Every replica the policy tried failed before sending a first byte. */
  | 'no-replica'
  /** The response had started when its server went down (reset, or frozen until the client gave up). */
  | 'cut-mid-body'
  /** The client gave up (workload requestTimeoutMs) before any first byte. */
  | 'gave-up';

export interface RequestResult {
  ok: boolean;
  /** The server that delivered the response. */
  server?: string;
  failure?: FailureReason;
}

/** Callbacks a policy may use to report what it learnt (for sweeps). */
export interface PolicyObserver {
  /** |estimate − sample| / sample just before a sample is folded in (paper Figure 5). */
  predictionError(relativeError: number): void;
  /** The server was marked failed after a timeout or error. */
  markedFailed(server: string, atMs: number): void;
}

export interface PolicyEnvironment {
  queue: EventQueue;
  network: SimulatedNetwork;
  /** Replica servers in the scenario's (the origin's) order. */
  servers: readonly string[];
  clients: number;
  seed: string | number;
  observer: PolicyObserver;
  /** A named random stream for the policy's own choices. */
  random(...streamName: Array<string | number>): RandomSource;
  /**
   * The protocol the browser speaks to every replica ('http/1.1', 'h2'), when the world says
   * (a generated world's workload.http): reported with each answer's head, as the worker
   * reads it from Resource Timing's nextHopProtocol. Absent: not known (the nine scenarios).
   */
  protocol?: string;
}

/** Abandons a request; may say why it had failed so far (e.g. "cut-mid-body" if its body had started). */
export type CancelRequest = () => FailureReason | void;

export interface PolicyClient {
  /** Starts serving `request`; calls `done` exactly once unless cancelled. Returns cancel. */
  request(request: LogicalRequest, done: (result: RequestResult) => void): CancelRequest;
}

export interface PolicyRun {
  /** The policy as seen by one client. */
  client(clientIndex: number): PolicyClient;
}

export interface Policy {
  /** Short name used in reports, e.g. "webpp-paper", "single-A". */
  name: string;
  description: string;
  start(environment: PolicyEnvironment): PolicyRun;
}
