/**
 * First visits (issue 13 §6): the order of servers this client has never measured. With an
 * empty table the webpp policy follows the origin's order of the replicas (issue 11); what
 * the origin knows refines it:
 * 1. Servers with a row in the origin's aggregate of other clients' measurements from
 *    similar networks (opt-in on the origin; aggregates only) come first, fastest first —
 *    Fei's authoritative resolver hands its metrics to new resolvers "as hints initially as
 *    they begin to gather their own metric information" (Section 2).
 * 2. The others keep the origin's order, except that a server whose fresh pushed service
 *    time exceeds the lowest among them by more than seedServiceGapMs goes behind them,
 *    least loaded first: its queue, not its distance, decides.
 * The client's own samples replace all of this: a never-measured server is refreshed at once
 * (maintenance.ts), and a measured one is ranked by its measurements.
 */
import type { AggregateResponseTime } from '../../engine/policy-types.js';
import type { ServerId } from '../../types.js';
import type { WebppOptions } from './options.js';
import type { PushedLoads } from './pushed-load.js';

/** Most aggregate rows kept (one per server). */
const MAX_AGGREGATE_ROWS = 256;

export interface Seeded {
  server: ServerId;
  reason: 'seed-aggregate' | 'cold-start-origin-order' | 'seed-pushed-load';
}

/** The origin's aggregate, newest row per server. */
export class Aggregates {
  private readonly rows = new Map<ServerId, AggregateResponseTime>();

  learn(rows: readonly AggregateResponseTime[]): void {
    for (const row of rows) {
      if (typeof row?.server !== 'string' || !(row.responseMs >= 0) || !Number.isFinite(row.responseMs) || !(row.sampleCount >= 1)) continue;
      if (!this.rows.has(row.server) && this.rows.size >= MAX_AGGREGATE_ROWS) continue;
      this.rows.set(row.server, { server: row.server, responseMs: row.responseMs, sampleCount: row.sampleCount });
    }
  }

  responseMs(server: ServerId): number | undefined {
    return this.rows.get(server)?.responseMs;
  }
}

/** `unmeasured` (in the origin's order) in the order to try them, each with why. */
export function seedOrder(unmeasured: readonly ServerId[], pushed: PushedLoads, aggregates: Aggregates, nowMs: number, options: WebppOptions): Seeded[] {
  const withAggregate = unmeasured
    .filter((server) => aggregates.responseMs(server) !== undefined)
    .sort((a, b) => (aggregates.responseMs(a) as number) - (aggregates.responseMs(b) as number));
  const rest = unmeasured.filter((server) => aggregates.responseMs(server) === undefined);
  const serviceOf = (server: ServerId): number | undefined => {
    const load = pushed.get(server);
    if (options.pushMaxAgeMs <= 0 || load?.serviceMs === undefined || nowMs - load.atMs > options.pushMaxAgeMs) return undefined;
    return load.serviceMs;
  };
  // The lowest pushed S among all unmeasured servers, those with an aggregate row included:
  // a queueing server without a row still goes behind the others.
  const known = unmeasured.map(serviceOf).filter((ms): ms is number => ms !== undefined);
  const lowestMs = known.length === 0 ? 0 : Math.min(...known);
  const loaded = (server: ServerId): boolean => (serviceOf(server) ?? lowestMs) - lowestMs > options.seedServiceGapMs;
  return [
    ...withAggregate.map((server): Seeded => ({ server, reason: 'seed-aggregate' })),
    ...rest.filter((server) => !loaded(server)).map((server): Seeded => ({ server, reason: 'cold-start-origin-order' })),
    ...rest
      .filter(loaded)
      .sort((a, b) => (serviceOf(a) as number) - (serviceOf(b) as number))
      .map((server): Seeded => ({ server, reason: 'seed-pushed-load' })),
  ];
}
