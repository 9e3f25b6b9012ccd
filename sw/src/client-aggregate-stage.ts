/**
 * The client aggregate for first visits as the rest of the worker sees it (the whole feature:
 * client-aggregate.ts). It is opt-in (`features=aggregate`, the webpp-sw-aggregate.js add-on;
 * addons.ts), as the origin's `clientAggregate` that feeds it is: without it the worker reads
 * no `webpp-aggregate` header and sends no report (NO_CLIENT_AGGREGATE).
 */
import type { ClientPolicy, ServerId } from '@webpp/core';
import type { ClientAggregateView } from './client-aggregate.js';
import type { WorkerPlugin } from './plugins.js';

export interface ClientAggregateStage {
  /** Reads the own origin's header. Never throws. */
  read(response: Response): void;
  /** Sends a report if the origin takes them and the interval has passed. Never rejects. */
  maybeReport(): Promise<void>;
  view(): ClientAggregateView;
  /** Its reports after requests (client-aggregate.ts clientAggregatePlugin); none without the add-on. */
  readonly plugin?: WorkerPlugin;
}

/** What builds the client aggregate of a ReplicaClient. */
interface ClientAggregateDeps {
  policy: ClientPolicy;
  selfOrigin: string;
  isKnownServer(server: ServerId): boolean;
  post(url: string, init: RequestInit): Promise<Response>;
}

export type ClientAggregateFactory = (deps: ClientAggregateDeps) => ClientAggregateStage;

/** The worker without the client aggregate. */
export const NO_CLIENT_AGGREGATE: ClientAggregateStage = Object.freeze({
  read: () => undefined,
  maybeReport: () => Promise.resolve(),
  view: () => ({ reportIntervalMs: null, rows: [], reportsSent: 0, reportsFailed: 0 }),
});
