/**
 * Late binding, the policy's half (the engine's late-binding.ts holds what this says must
 * wait): a server takes at most COLD_WINDOW of this client's exchanges at once while what a
 * request needs to know of it is unknown — its first byte (never measured), or its pace for a
 * body large enough that the pace decides (minThroughputSampleBytes, the smallest body whose
 * time measures a link). A first page's burst is otherwise bound before any answer came, a
 * share of it on every replica in the origin's order (plan.ts, coldSpread), and a thin link's
 * share then sets the page's time. One exchange per unknown server measures it; the rest of
 * the burst goes to the servers already known, or is held until answers say which replicas
 * are fast: Sparrow's probes and late binding (Ousterhout et al., SOSP 2013, §3 and §4.3:
 * sample first, commit work only once a worker is known free).
 */
import type { InFlightExchange } from '../../engine/policy-types.js';
import type { ServerId } from '../../types.js';
import type { WebppOptions } from './options.js';
import type { ServerRecord } from './server-record.js';

/** Exchanges of this client in flight at once to a server whose first byte, or pace, a request needs and is unknown. */
const COLD_WINDOW = 1;

/**
 * Exchanges of this client in flight at once to a known server while another candidate's first
 * answer is still coming: what a browser's HTTP/1.1 connections to one host carry at once
 * (queue-ahead.ts, connectionsFor). Without it, over HTTP/2 (no connection limit) the whole
 * burst went to the first server to answer the moment it answered, before the others could.
 */
const PENDING_ANSWERS_WINDOW = 6;

/**
 * ClientPolicy.sendableAttempt: the first of `servers` (a plan's, best first) that a request
 * of `sizeBytes` (0: unknown) may be sent to now, skipping the unknown servers whose window is
 * full and, after the first, the ejected ones (a last resort); undefined when it should wait
 * for the answers in flight. With nothing in flight to wait for, the plan's first.
 */
export function sendableAttempt(servers: readonly ServerId[], records: ReadonlyMap<ServerId, ServerRecord>, inFlight: readonly InFlightExchange[], sizeBytes: number, options: WebppOptions): number | undefined {
  const paceMatters = sizeBytes >= options.minThroughputSampleBytes;
  const known = (server: ServerId): boolean => {
    const record = records.get(server);
    return record?.measured === true && (!paceMatters || record.throughput.bytesPerMs() !== undefined);
  };
  const pending = servers.some((server) => records.get(server)?.measured !== true && records.get(server)?.state !== 'failed' && countOf(server, inFlight) > 0);
  let waiting = false;
  for (let index = 0; index < servers.length; index++) {
    const server = servers[index]!;
    if (index > 0 && records.get(server)?.state === 'failed') continue;
    const window = known(server) ? (pending ? PENDING_ANSWERS_WINDOW : Infinity) : COLD_WINDOW;
    if (countOf(server, inFlight) < window) return index;
    // A known server is the policy's choice: wait for it; an unknown one is passed over for the next.
    if (window !== COLD_WINDOW) return undefined;
    waiting = true;
  }
  return waiting ? undefined : 0;
}

function countOf(server: ServerId, inFlight: readonly InFlightExchange[]): number {
  let count = 0;
  for (const exchange of inFlight) if (exchange.server === server) count++;
  return count;
}
