/**
 * Bursts (issue 22 §2): the queue a new request joins on a server, from this client's own
 * exchanges in flight there (the engine's ledger, PlanInput.inFlight).
 *
 * - Connections. A browser opens at most CONNECTIONS_PER_SERVER connections to a host over
 *   HTTP/1.1; a request beyond them waits for one to free. Each full round of connections
 *   ahead costs about one first byte (the request behind it is sent only when one ends).
 *   Over HTTP/2 and HTTP/3 one connection carries up to STREAMS_PER_MULTIPLEXED_CONNECTION
 *   requests at once; the server's protocol is learnt from its samples (connectionsFor).
 * - The link. A replica's concurrent responses share its link, which serves them by
 *   processor sharing (TCP's fair share, roughly): a new body of x bytes, joining bodies with
 *   r_i bytes left, completes after (Σ_i min(r_i, x) + x) / rate (Kleinrock, "Queueing
 *   Systems" vol. 2, 1976, §4.4: the response time of a job in an M/G/1 processor-sharing
 *   queue depends on the work of the others only up to its own size). The body term the
 *   plan already charges is x / rate; the queue adds Σ_i min(r_i, x) / rate.
 *
 * C3 (Suresh et al., NSDI 2015, §4.1) ranks replicas with the client's own outstanding
 * requests in the score; this is that term for a browser, priced in time rather than by C3's
 * cubic penalty, since here the client knows its own bytes and the link's measured rate.
 * Greedy "earliest expected completion" per request is list scheduling (Graham, "Bounds on
 * multiprocessing timing anomalies", 1969: within 2 − 1/m of the best page makespan), so a
 * burst spreads over replicas exactly when that finishes the page sooner.
 *
 * The same wait lengthens the request's timeout: the client's own queue is never taken for
 * the server's failure.
 */
import type { InFlightExchange } from '../../engine/policy-types.js';
import type { ServerId } from '../../types.js';
import type { ServerRecord } from './server-record.js';

/**
 * Connections per host a browser opens over HTTP/1.1: 6 in Chromium (kMaxSocketsPerGroup),
 * Firefox (network.http.max-persistent-connections-per-server) and Safari; RFC 9112 §9.4
 * leaves the number to the client. Also the assumption while a server's protocol is not
 * known (no sample said it yet).
 */
const CONNECTIONS_PER_SERVER = 6;

/**
 * Exchanges one multiplexed connection (HTTP/2, HTTP/3) carries at once: its streams. The
 * server's SETTINGS_MAX_CONCURRENT_STREAMS bounds them, and RFC 9113 §5.1.2 recommends a value
 * no smaller than 100; Chromium assumes 100 until the server's SETTINGS come
 * (net/spdy/spdy_session.h, kInitialMaxConcurrentStreams), and HTTP/3 grants streams the same way
 * (RFC 9000 §4.6, initial_max_streams_bidi). A browser opens one such connection per
 * origin, so a burst beyond six requests waits for no connection there, only for its share
 * of the link.
 */
const STREAMS_PER_MULTIPLEXED_CONNECTION = 100;

/**
 * The exchanges a server takes at once from this client over `protocol` (an ALPN id, as
 * Resource Timing's nextHopProtocol gives it): h2 and h3 multiplex, anything else (HTTP/1.1,
 * or not known) gets CONNECTIONS_PER_SERVER.
 */
export function connectionsFor(protocol: string | undefined): number {
  return protocol === 'h2' || protocol === 'h3' ? STREAMS_PER_MULTIPLEXED_CONNECTION : CONNECTIONS_PER_SERVER;
}

/**
 * The exchanges `server` takes at once from this client: the browser's connections for its
 * protocol (connectionsFor), or fewer when the server's own concurrency is lower
 * (concurrency.ts, exchangesAtOnce). The one answer to "how many at once" for the policy's
 * pricing, its "busy, not dead" rule and the engine's queue timers (ClientPolicy.exchangesAtOnce).
 */
export function exchangesAtOnce(record: Pick<ServerRecord, 'protocol' | 'concurrency'> | undefined): number {
  return Math.min(connectionsFor(record?.protocol), record?.concurrency.exchangesAtOnce() ?? Infinity);
}

export interface QueueAhead {
  /** Exchanges of this client in flight to the server. */
  count: number;
  /** Expected wait for a connection (ms). */
  connectionWaitMs: number;
  /** Expected wait behind this client's exchanges still at the server, for its own concurrency (ms). */
  serverWaitMs: number;
  /** Expected extra time the new body takes because of the bodies ahead on the shared link (ms). */
  sharedLinkMs: number;
}

const NONE: QueueAhead = Object.freeze({ count: 0, connectionWaitMs: 0, serverWaitMs: 0, sharedLinkMs: 0 });

/**
 * The queue ahead of a new request of `sizeBytes` on `server`, given its mean first byte,
 * measured throughput (bytes/ms; undefined: the link's share is not priced), the browser's
 * connections to it (connectionsFor) and the first byte's growth per exchange ahead at the
 * server (concurrency.ts, perExchangeMs; 0: not measured).
 */
export function queueAhead(
  server: ServerId,
  inFlight: readonly InFlightExchange[] | undefined,
  sizeBytes: number,
  ttfbMeanMs: number,
  bytesPerMs: number | undefined,
  nowMs: number,
  connections: number = CONNECTIONS_PER_SERVER,
  perExchangeMs = 0,
): QueueAhead {
  if (inFlight === undefined || inFlight.length === 0) return NONE;
  let count = 0;
  let atServer = 0;
  let sharedBytes = 0;
  for (const exchange of inFlight) {
    if (exchange.server !== server) continue;
    const receivedBytes = exchange.headAtMs === undefined || bytesPerMs === undefined ? 0 : Math.max(0, nowMs - exchange.headAtMs) * bytesPerMs;
    const leftBytes = Math.max(0, exchange.sizeBytes - receivedBytes);
    // A body the measured rate would have carried by now is done (the driver may not say so).
    if (exchange.headAtMs !== undefined && leftBytes <= 0) continue;
    count++;
    if (exchange.headAtMs === undefined) atServer++;
    sharedBytes += Math.min(leftBytes, sizeBytes);
  }
  if (count === 0) return NONE;
  const connectionWaitMs = Math.floor(count / Math.max(1, connections)) * ttfbMeanMs;
  // Little's law: the server drains this client's exchanges there at 1 / perExchangeMs (concurrency.ts).
  const serverWaitMs = atServer * perExchangeMs;
  const sharedLinkMs = bytesPerMs === undefined || !(bytesPerMs > 0) ? 0 : sharedBytes / bytesPerMs;
  return { count, connectionWaitMs, serverWaitMs, sharedLinkMs };
}
