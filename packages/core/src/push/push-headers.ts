/**
 * The wire format of server push (issue 13; Fei et al., INFOCOM 1998, Section 4: servers
 * push their own performance, clients calibrate it with their own measurements):
 *
 *   Server-Timing: webpp;dur=12.5;util=0.62
 *     the answering server's smoothed service time in ms (W3C Server Timing, so it shows in
 *     DevTools and in Resource Timing's serverTiming), and `util`, the share of the last
 *     measurement interval it was busy (0–1; a Node origin's event-loop utilisation; the
 *     backend utilisation gRPC's weighted round robin balances on, gRFC A58);
 *   webpp-load: "https://b.example";dur=8.1;util=0.3;age=1200, "https://c.example";dur=30;age=400
 *     the latest values the answering server holds for its peers, as a Structured Field
 *     List (RFC 8941) of origin strings with parameters: `dur` the peer's pushed service
 *     time in ms, `util` its utilisation (optional), `age` how many ms ago the peer pushed it.
 *
 * Both parsers are lenient about what they do not know (other metrics, other parameters,
 * malformed members are skipped) and strict about what they return.
 */
import { canonicalHttpUrl } from '../_private/whatwg-url.js';

export const SERVER_TIMING_HEADER = 'server-timing';
export const SERVER_TIMING_METRIC = 'webpp';
export const LOAD_HEADER = 'webpp-load';

/** Largest service time or age accepted from a header (one day, in ms). */
const MAX_HEADER_MS = 86_400_000;
/** At most this many members of webpp-load are read. */
const MAX_LOAD_MEMBERS = 64;

/** One server's pushed service time, as a header carried it. */
export interface PushedLoad {
  /** The server's origin ("https://b.example"), as in the bindings. */
  server: string;
  serviceMs: number;
  /** The server's utilisation (busy share of its last interval, 0–1), when it said. */
  utilisation?: number;
  /** How long ago the server pushed it (0 for Server-Timing: pushed with this response). */
  ageMs: number;
}

/** `webpp;dur=12.5` or `webpp;dur=12.5;util=0.62` (ms to 0.1, utilisation to 0.01). */
export function formatServerTiming(serviceMs: number, utilisation?: number): string {
  return `${SERVER_TIMING_METRIC};dur=${roundTenth(serviceMs)}${utilParam(utilisation)}`;
}

function utilParam(utilisation: number | undefined): string {
  return utilisation === undefined || !Number.isFinite(utilisation) ? '' : `;util=${Math.round(Math.min(1, Math.max(0, utilisation)) * 100) / 100}`;
}

/** The `util` of the `webpp` metric of a Server-Timing value (0–1), or undefined (absent, malformed or above 1). */
export function parseServerTimingUtilisation(value: string | null | undefined): number | undefined {
  if (value === null || value === undefined) return undefined;
  for (const metric of splitMembers(value)) {
    const [name, ...params] = metric.split(';').map((part) => part.trim());
    if (name === SERVER_TIMING_METRIC && numberParam(params, 'dur') !== undefined) return shareParam(params, 'util');
  }
  return undefined;
}

/** `name=<decimal>` among params, in [0, 1]. */
function shareParam(params: readonly string[], name: string): number | undefined {
  const value = numberParam(params, name);
  return value !== undefined && value <= 1 ? value : undefined;
}

/** The `dur` of the `webpp` metric of a Server-Timing value, or undefined. */
export function parseServerTiming(value: string | null | undefined): number | undefined {
  if (value === null || value === undefined) return undefined;
  for (const metric of splitMembers(value)) {
    const [name, ...params] = metric.split(';').map((part) => part.trim());
    if (name !== SERVER_TIMING_METRIC) continue;
    const dur = numberParam(params, 'dur');
    if (dur !== undefined) return dur;
  }
  return undefined;
}

/** The webpp-load value of `loads` (origins are quoted; values rounded). */
export function formatLoadHeader(loads: readonly PushedLoad[]): string {
  return loads.map((load) => `"${load.server}";dur=${roundTenth(load.serviceMs)}${utilParam(load.utilisation)};age=${Math.max(0, Math.round(load.ageMs))}`).join(', ');
}

/** Every well-formed member of a webpp-load value (canonical http(s) origins only). */
export function parseLoadHeader(value: string | null | undefined): PushedLoad[] {
  if (value === null || value === undefined) return [];
  const loads: PushedLoad[] = [];
  for (const member of splitMembers(value).slice(0, MAX_LOAD_MEMBERS)) {
    const match = /^"([^"\\]{1,2048})"((?:;.*)?)$/.exec(member.trim());
    if (match === null) continue;
    const server = originOf(match[1] ?? '');
    const params = (match[2] ?? '').split(';').slice(1).map((part) => part.trim());
    const serviceMs = numberParam(params, 'dur');
    const ageMs = numberParam(params, 'age') ?? 0;
    if (server === undefined || serviceMs === undefined) continue;
    const utilisation = shareParam(params, 'util');
    loads.push(utilisation === undefined ? { server, serviceMs, ageMs } : { server, serviceMs, utilisation, ageMs });
  }
  return loads;
}

export function roundTenth(value: number): number {
  return Math.round(Math.max(0, value) * 10) / 10;
}

/** Members of a comma-separated list; commas inside quoted strings do not split. */
export function splitMembers(value: string): string[] {
  const members: string[] = [];
  let current = '';
  let quoted = false;
  for (const char of value) {
    if (char === '"') quoted = !quoted;
    if (char === ',' && !quoted) {
      members.push(current.trim());
      current = '';
    } else {
      current += char;
    }
  }
  members.push(current.trim());
  return members.filter((member) => member !== '');
}

/** `name=<decimal>` among params; finite, in [0, one day]. */
export function numberParam(params: readonly string[], name: string): number | undefined {
  for (const param of params) {
    const [key, raw] = param.split('=', 2).map((part) => part.trim());
    if (key !== name || raw === undefined || !/^\d{1,12}(\.\d{1,6})?$/.test(raw)) continue;
    const value = Number(raw);
    return value <= MAX_HEADER_MS ? value : undefined;
  }
  return undefined;
}

/** "scheme://host[:port]" of an http(s) URL without path, or undefined. */
export function originOf(value: string): string | undefined {
  const url = canonicalHttpUrl(value);
  return url !== undefined && url.pathAndQuery === '/' ? url.origin : undefined;
}
