/**
 * The wire format of the client aggregate for first visits (issue 13 §6; Fei et al., INFOCOM
 * 1998, Section 2: the authoritative resolver hands its metrics to new resolvers "as hints
 * initially as they begin to gather their own metric information"). Opt-in on the origin.
 *
 *   webpp-aggregate: report;interval=300, "https://b.example";dur=85.2;n=31, "https://c.example";dur=40;n=22
 *
 * sent by the site's own origin (a replica's is ignored), a Structured Field List (RFC 8941):
 * - the token `report` with `interval` (seconds): the origin takes reports of this worker's
 *   own measurements, at most one per interval (CLIENT_REPORT_PATH);
 * - one string per replica: other clients' response times from networks like the
 *   requester's, `dur` their decayed geometric mean in ms, `n` how many reports of the
 *   current and previous interval it rests on (only rows with n ≥ the origin's threshold are sent).
 *
 * The report a worker sends (POST, same-origin JSON, at most MAX_CLIENT_REPORT_BYTES):
 *   {"rows":[{"server":"https://b.example","responseMs":85.2}]}
 * one row per replica it measured since its last report: its own smoothed time to first byte.
 * No URLs, no identifiers.
 */
import type { AggregateResponseTime } from '../engine/policy-types.js';
import { numberParam, originOf, roundTenth, splitMembers } from './push-headers.js';

export const AGGREGATE_HEADER = 'webpp-aggregate';
export const MAX_CLIENT_REPORT_BYTES = 4096;
export const MAX_CLIENT_REPORT_ROWS = 32;
/** At most this many members of webpp-aggregate are read. */
const MAX_AGGREGATE_MEMBERS = 64;

export interface ClientReportRow {
  server: string;
  responseMs: number;
}

export interface AggregateHeader {
  /** Reports are taken, at most one per this many ms (undefined: reports are off). */
  reportIntervalMs: number | undefined;
  rows: AggregateResponseTime[];
}

export function formatAggregateHeader(header: AggregateHeader): string {
  const members: string[] = [];
  if (header.reportIntervalMs !== undefined) members.push(`report;interval=${Math.max(1, Math.round(header.reportIntervalMs / 1000))}`);
  for (const row of header.rows) members.push(`"${row.server}";dur=${roundTenth(row.responseMs)};n=${Math.max(0, Math.floor(row.sampleCount))}`);
  return members.join(', ');
}

/** Every well-formed member of a webpp-aggregate value; lenient about what it does not know. */
export function parseAggregateHeader(value: string | null | undefined): AggregateHeader {
  const header: AggregateHeader = { reportIntervalMs: undefined, rows: [] };
  if (value === null || value === undefined) return header;
  for (const member of splitMembers(value).slice(0, MAX_AGGREGATE_MEMBERS)) {
    const [item = '', ...params] = member.split(';').map((part) => part.trim());
    if (item === 'report') {
      const intervalS = numberParam(params, 'interval');
      if (intervalS !== undefined && intervalS >= 1) header.reportIntervalMs = intervalS * 1000;
      continue;
    }
    const match = /^"([^"\\]{1,2048})"$/.exec(item);
    const server = match === null ? undefined : originOf(match[1] ?? '');
    const responseMs = numberParam(params, 'dur');
    const sampleCount = numberParam(params, 'n');
    if (server === undefined || responseMs === undefined || sampleCount === undefined || sampleCount < 1) continue;
    header.rows.push({ server, responseMs, sampleCount });
  }
  return header;
}

/** The body of a report. */
export function encodeClientReport(rows: readonly ClientReportRow[]): string {
  return JSON.stringify({ rows: rows.slice(0, MAX_CLIENT_REPORT_ROWS).map((row) => ({ server: row.server, responseMs: roundTenth(row.responseMs) })) });
}
