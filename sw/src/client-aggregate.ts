/**
 * The worker's side of the client aggregate for first visits (issue 13 §6; Fei et al.,
 * INFOCOM 1998, Section 2: a new resolver starts from the authoritative one's metrics "as
 * hints initially as they begin to gather their own"). Only when the site's own origin turns
 * it on (its `webpp-aggregate` header, core's push/aggregate-header.ts):
 *
 * - learn: the own origin's rows — other clients' response times from networks like this
 *   one's — go to the policy's aggregate input (learnAggregateResponseTimes), which seeds the
 *   order of replicas this worker has not measured yet; rows about servers the site does not
 *   use are dropped (trust.ts), and a replica's header is never read for this;
 * - report: at most once per the interval the origin names (the first one interval after it
 *   was turned on), one small POST to the own origin, without cookies: per replica measured
 *   since the last report, the policy's smoothed time to first byte. No URLs, no identifiers,
 *   nothing about servers it has not measured itself. Failures are counted, never retried
 *   early, and never affect a page.
 */
import { AGGREGATE_HEADER, CLIENT_REPORT_PATH, encodeClientReport, parseAggregateHeader } from '@webpp/core';
import type { AggregateResponseTime, ClientPolicy, ClientReportRow, ServerId } from '@webpp/core';
import type { ClientAggregateFactory } from './client-aggregate-stage.js';
import type { WorkerPlugin } from './plugins.js';

export interface ClientAggregateOptions {
  policy: ClientPolicy;
  selfOrigin: string;
  /** Servers the site uses (TrustRule.isKnownServer). */
  isKnownServer(server: ServerId): boolean;
  /** Sends a report (fetch in the worker). */
  post(url: string, init: RequestInit): Promise<Response>;
  now?: () => number;
}

/** What the state snapshot shows. */
export interface ClientAggregateView {
  /** The origin takes reports at most this often (null: it does not take any). */
  reportIntervalMs: number | null;
  /** The rows last learned from the own origin. */
  rows: AggregateResponseTime[];
  reportsSent: number;
  reportsFailed: number;
}

/** handlerDidComplete: a report to the own origin when it takes them and the interval has passed. */
function clientAggregatePlugin(aggregate: ClientAggregate): WorkerPlugin {
  return {
    handlerDidComplete: () => aggregate.maybeReport(),
  };
}

export class ClientAggregate {
  readonly plugin = clientAggregatePlugin(this);
  private reportIntervalMs: number | undefined;
  /** When the last report went out (or reporting was turned on); samples after `reportedUpToMs` are new. */
  private lastReportAtMs = 0;
  private reportedUpToMs = 0;
  private sending = false;
  private rows: AggregateResponseTime[] = [];
  private reportsSent = 0;
  private reportsFailed = 0;

  constructor(private readonly options: ClientAggregateOptions) {}

  /** Reads the own origin's header. Never throws. */
  read(response: Response): void {
    try {
      const value = response.headers.get(AGGREGATE_HEADER);
      if (value === null) return;
      const nowMs = this.now();
      const header = parseAggregateHeader(value);
      if (header.reportIntervalMs !== undefined && this.reportIntervalMs === undefined) this.lastReportAtMs = nowMs;
      this.reportIntervalMs = header.reportIntervalMs;
      const rows = header.rows.filter((row) => this.options.isKnownServer(row.server));
      if (rows.length === 0) return;
      this.rows = rows;
      this.options.policy.learnAggregateResponseTimes?.(rows, nowMs);
    } catch {
      // Fail open: a header we cannot read teaches nothing.
    }
  }

  /** Sends a report if the origin takes them and the interval has passed. Never rejects. */
  async maybeReport(): Promise<void> {
    const intervalMs = this.reportIntervalMs;
    const nowMs = this.now();
    if (intervalMs === undefined || this.sending || nowMs - this.lastReportAtMs < intervalMs) return;
    const rows: ClientReportRow[] = this.options.policy
      .describe(nowMs)
      .filter((view) => view.sampleCount > 0 && view.lastSampleAtMs > this.reportedUpToMs && view.ttfbEstimateMs !== undefined && Number.isFinite(view.ttfbEstimateMs))
      .map((view) => ({ server: view.server, responseMs: view.ttfbEstimateMs as number }));
    if (rows.length === 0) return;
    this.sending = true;
    this.lastReportAtMs = nowMs;
    this.reportedUpToMs = nowMs;
    try {
      const response = await this.options.post(new URL(CLIENT_REPORT_PATH, this.options.selfOrigin).href, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: encodeClientReport(rows),
        credentials: 'omit',
        cache: 'no-store',
      });
      if (response.ok) this.reportsSent += 1;
      else this.reportsFailed += 1;
    } catch {
      this.reportsFailed += 1;
    } finally {
      this.sending = false;
    }
  }

  view(): ClientAggregateView {
    return { reportIntervalMs: this.reportIntervalMs ?? null, rows: [...this.rows], reportsSent: this.reportsSent, reportsFailed: this.reportsFailed };
  }

  private now(): number {
    return (this.options.now ?? Date.now)();
  }
}

/** The client aggregate of the webpp-sw-aggregate.js add-on (and of a Workbox worker). */
export const createClientAggregate: ClientAggregateFactory = (deps) => new ClientAggregate(deps);
