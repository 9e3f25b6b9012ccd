/**
 * Options of the client aggregate for first visits (issue 13 §6; client-aggregate/), composed
 * into the plugin's schema (plugin-schema.ts); docs/origin.md "Client aggregate" explains what
 * is kept and what is not.
 */
import { Type } from 'typebox';
import { defaulted } from './resolved.js';

const clientAggregateSwitch = {
  clientAggregate: defaulted(
    Type.Boolean({
      default: false,
      description:
        "Take workers' reports of their own response times to the replicas and send fresh visitors an aggregate of those from networks like theirs (`webpp-aggregate`); aggregates only, nothing per visitor is kept, see [Client aggregate](#client-aggregate). Off by default.",
      cli: { group: 'Behaviour' },
    }),
  ),
};

/** The options of the client-aggregate feature (features/client-aggregate.ts). */
export const clientAggregateSettings = {
  clientReportIntervalMs: defaulted(
    Type.Integer({
      minimum: 1_000,
      maximum: 86_400_000,
      default: 300_000,
      description: 'A worker reports at most once per this interval (a second report from the same address in one interval is ignored); a row is published while `clientAggregateMinReports` distinct reporters of its network class reported it in the current and previous interval.',
      cli: { group: 'Limits and tuning' },
    }),
  ),
  clientAggregateMinReports: defaulted(
    Type.Integer({
      minimum: 3,
      maximum: 1_000_000,
      default: 20,
      description: 'k: a (network class, replica) row is sent to visitors only when it rests on at least this many distinct reporters (IPv4 addresses or IPv6 /64s; one of them counts once however many reports it sends).',
      cli: { group: 'Limits and tuning' },
    }),
  ),
  clientReportsPerMinute: defaulted(
    Type.Integer({
      minimum: 1,
      maximum: 1_000_000,
      default: 120,
      description: 'Reports taken per network class and minute (a token bucket, burst of the same size); beyond: 429 `WEBPP_ERR_RATE_LIMITED`.',
      cli: { group: 'Limits and tuning' },
    }),
  ),
};

export const clientAggregateOptionProperties = { ...clientAggregateSwitch, ...clientAggregateSettings };
