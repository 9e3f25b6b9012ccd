/**
 * Which of the worker's requests met the browser's per-host queue.
 *
 * Over HTTP/1.1, Chromium (like every major browser) keeps at most six connections per
 * host: in a burst, the seventh request to a replica waits until one of the first six has
 * its whole body. A replica that sends `Timing-Allow-Origin` shows that wait in Resource
 * Timing (requestStart − fetchStart) and the sampler leaves it out (ttfb-sampler.ts). Most
 * CDNs and static hosts send no such header; their entries carry no requestStart or
 * responseStart, and the only timing left is fetch() → headers, which includes the wait (a
 * 50 ms replica measured 830 ms in a burst).
 *
 * The worker knows its own requests, so it can tell which of them waited: a request sent
 * while six earlier requests to the same host were still in flight met the queue. Its
 * fetch() → headers time is not a sample of the replica; one sent while fewer were in
 * flight went out at once and is (paper Section 4.1: "the time to receive the first byte",
 * plus the worker's own overhead). In a burst of 30 the first six of each replica are
 * timed; the other 24 teach nothing about latency (they still count as answers).
 *
 * A request is in flight from fetch() until its body is complete: its Resource Timing
 * entry's responseEnd (entries come, timed or not, when the body ends), or until the fetch
 * fails or is aborted. Entries are delivered late and in batches, so the count is taken
 * when the sample is judged (its own entry has come), not when the request is sent.
 *
 * HTTP/2 multiplexes all requests to a host on one connection and has no such queue, but
 * without Timing-Allow-Origin the entry does not say which protocol was used
 * (nextHopProtocol is empty): the rule is applied to every host. Over h2 it only costs
 * samples, never accuracy.
 */

import { wasPreloaded } from './navigation-preload.js';
import type { WorkerPlugin } from './plugins.js';

/** Connections per host Chromium opens over HTTP/1.1 (net::ClientSocketPoolManager). */
export const CONNECTIONS_PER_HOST = 6;

export interface Flight {
  url: string;
  /** Order of sending: a burst's fetches may share one performance.now() value. */
  seq: number;
  sentAtMs: number;
  /** When its head arrived; undefined before. */
  headAtMs?: number;
  /** When the body was complete (or the request failed); undefined while in flight. */
  endAtMs: number | undefined;
  /** Already matched to its Resource Timing entry. */
  entrySeen: boolean;
  /** Called once when it ends (whenEnded). */
  onEnd?: (() => void) | undefined;
}

/** The parts of a Resource Timing entry the queue reads. */
export interface FlightEntryLike {
  name: string;
  startTime: number;
  responseEnd: number;
}

export interface ConnectionQueueOptions {
  /** performance.now(): the time base of Resource Timing entries. */
  now: () => number;
  /** Requests one host serves at once (default CONNECTIONS_PER_HOST). */
  connectionsPerHost?: number;
  /** A flight with no end after this long is forgotten (its entry never came). Default 30 s. */
  maxFlightMs?: number;
  /** Flights kept per host at most; the oldest go first. Default 512. */
  maxFlightsPerHost?: number;
}

/** Clock tolerance when matching an entry to its fetch (timers are coarsened to 0.1 ms). */
const MATCH_SLACK_MS = 1;

function hostOf(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return url;
  }
}

function ended(flight: Flight): void {
  const onEnd = flight.onEnd;
  flight.onEnd = undefined;
  onEnd?.();
}

export class ConnectionQueue {
  private readonly hosts = new Map<string, Flight[]>();
  private readonly now: () => number;
  private readonly connectionsPerHost: number;
  private readonly maxFlightMs: number;
  private readonly maxFlightsPerHost: number;
  private nextSeq = 0;
  /** The flight of each request sent through track() (whenEnded). */
  private readonly flights = new WeakMap<Request, Flight>();

  constructor(options: ConnectionQueueOptions) {
    this.now = options.now;
    this.connectionsPerHost = options.connectionsPerHost ?? CONNECTIONS_PER_HOST;
    this.maxFlightMs = options.maxFlightMs ?? 30_000;
    this.maxFlightsPerHost = options.maxFlightsPerHost ?? 512;
  }

  /** Wraps a fetch function so that every request it sends is a flight of its host (the background requests). */
  track(fetchFn: (request: Request) => Promise<Response>): (request: Request) => Promise<Response> {
    return (request) => {
      this.sent(request);
      return fetchFn(request).then(
        (response) => (this.answered(request), response),
        (error: unknown) => {
          this.answered(request, true);
          throw error;
        },
      );
    };
  }

  /** `request` is being sent now: a flight of its host until its body ends, it fails or is aborted. */
  sent(request: Request): void {
    const flight = this.begin(request.url);
    this.flights.set(request, flight);
    request.signal?.addEventListener('abort', () => this.end(flight), { once: true });
  }

  /**
   * The head of `request` (sent()) arrived, or its fetch failed: an entry that began later is
   * another fetch's. `released`: it holds none of the worker's connections any more, and no
   * Resource Timing entry will say so: its fetch failed, or its answer was the browser's own (a
   * navigation preload, which has no entry in the worker's timeline), or had no body (an
   * opaque redirect).
   */
  answered(request: Request, released?: boolean): void {
    const flight = this.flights.get(request);
    if (flight === undefined) return;
    flight.headAtMs = this.now();
    if (released) this.end(flight);
  }

  /** A request to `url` is being sent now. */
  begin(url: string): Flight {
    const host = hostOf(url);
    const flights = this.hosts.get(host) ?? [];
    this.hosts.set(host, flights);
    this.prune(flights);
    const flight: Flight = { url, seq: this.nextSeq++, sentAtMs: this.now(), endAtMs: undefined, entrySeen: false };
    flights.push(flight);
    return flight;
  }

  /** The request failed or was aborted: its connection is free. */
  end(flight: Flight): void {
    flight.endAtMs ??= this.now();
    ended(flight);
  }

  /**
   * Calls `onEnd` once when the body of `request` (sent through track()) is complete, or the
   * request failed or was aborted (engine-hooks.ts: the engine's in-flight ledger).
   */
  whenEnded(request: Request, onEnd: () => void): void {
    const flight = this.flights.get(request);
    if (flight === undefined) return;
    flight.onEnd = onEnd;
    if (flight.endAtMs !== undefined) ended(flight);
  }

  /**
   * A Resource Timing entry (timed or not): the body of that request is complete. It is the
   * entry of a flight sent before it began and answered after (as the sampler matches its
   * samples): a later fetch of the same URL that the queue does not track (the own origin's
   * answer to the page's own request, own-origin-answers.ts) does not end an older flight.
   */
  onEntry(entry: FlightEntryLike): void {
    const flight = this.closestFlight(entry.name, entry.startTime, (candidate) => !candidate.entrySeen && entry.startTime <= (candidate.headAtMs ?? Infinity) + MATCH_SLACK_MS);
    if (flight === undefined) return;
    flight.entrySeen = true;
    const endAtMs = entry.responseEnd > 0 ? entry.responseEnd : this.now();
    // An abort may have ended it earlier in our books; the entry's time is the browser's.
    flight.endAtMs = flight.endAtMs === undefined ? endAtMs : Math.min(flight.endAtMs, endAtMs);
    ended(flight);
  }

  /**
   * Whether the request to `url` sent at `sentAtMs` went out at once: fewer than
   * connectionsPerHost earlier requests to its host were in flight when it was sent.
   * undefined when the request is unknown (sent by a fetch this queue does not track).
   */
  metNoQueue(url: string, sentAtMs: number): boolean | undefined {
    const own = this.closestFlight(url, sentAtMs, () => true);
    if (own === undefined) return undefined;
    const flights = this.hosts.get(hostOf(url)) ?? [];
    let ahead = 0;
    for (const flight of flights) {
      if (flight.seq >= own.seq) continue;
      if (flight.endAtMs === undefined || flight.endAtMs > own.sentAtMs) ahead++;
    }
    return ahead < this.connectionsPerHost;
  }

  /** Requests to the host of `url` in flight now (for tests and the dashboard). */
  inFlight(url: string): number {
    return (this.hosts.get(hostOf(url)) ?? []).filter((flight) => flight.endAtMs === undefined).length;
  }

  /** The flight of `url` sent closest to `atMs` (within the clock slack) that `accept` admits. */
  private closestFlight(url: string, atMs: number, accept: (flight: Flight) => boolean): Flight | undefined {
    let best: Flight | undefined;
    let bestGapMs = Infinity;
    for (const flight of this.hosts.get(hostOf(url)) ?? []) {
      if (flight.url !== url || !accept(flight)) continue;
      const gapMs = Math.abs(atMs - flight.sentAtMs);
      if (atMs < flight.sentAtMs - MATCH_SLACK_MS) continue;
      if (gapMs < bestGapMs) {
        best = flight;
        bestGapMs = gapMs;
      }
    }
    return best;
  }

  /**
   * Forgets flights no sample can ask about any more: ended ones older than maxFlightMs,
   * unended ones older than maxFlightMs (their entry never came: a cancelled body), which end
   * now (whenEnded: else the engine's ledger kept them for its own minute).
   */
  private prune(flights: Flight[]): void {
    const horizonMs = this.now() - this.maxFlightMs;
    let drop = 0;
    while (drop < flights.length && (flights[drop] as Flight).sentAtMs < horizonMs) drop++;
    drop = Math.max(drop, flights.length + 1 - this.maxFlightsPerHost);
    for (const flight of flights.splice(0, drop)) ended(flight);
  }
}

/**
 * requestWillFetch / fetchDidFail: every physical request of a bound request is a flight of its
 * host. fetchDidSucceed: a navigation answered by its preload (navigation-preload.ts) ends at
 * its head. The browser sent that request before the worker asked, so no entry of the worker's
 * timeline ends it. Left open, it stayed in the engine's in-flight ledger for a minute, so
 * after six warm navigations every request to the own origin waited in late binding for a
 * whole timeout (0.5–1.5 s per page).
 */
export function connectionPlugin(queue: ConnectionQueue): WorkerPlugin {
  return {
    requestWillFetch: (request) => queue.sent(request),
    fetchDidFail: (request) => queue.answered(request, true),
    // An opaque redirect (own-origin-answers.ts) has no body: its connection is free at the head.
    fetchDidSucceed: ({ request, response }) => queue.answered(request, wasPreloaded(response) || response.type === 'opaqueredirect'),
  };
}
