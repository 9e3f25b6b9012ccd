/**
 * Concurrent misses for one object are merged (single flight, as Go's
 * golang.org/x/sync/singleflight or nginx's `proxy_cache_lock`): the first request of a
 * missing key leads — it asks the peers, or runs the route, the app or the upstream — and
 * the requests for the same key that arrive meanwhile wait for its response instead of
 * asking again. A leader whose response cannot be shared (not cacheable, an error, aborted)
 * settles its flight empty, and the waiting requests then run the route themselves. A
 * follower waits at most `maxWaitMs`.
 */
import type { CachedResponse } from './types.js';

/** What a leader hands its followers: the response as it would be cached. */
export interface SharedResponse {
  response: CachedResponse;
  ttlMs: number | undefined;
  initialAgeS: number;
}

interface Flight {
  promise: Promise<SharedResponse | undefined>;
  settle: (shared: SharedResponse | undefined) => void;
}

export class SingleFlight {
  private readonly flights = new Map<string, Flight>();

  constructor(private readonly maxWaitMs: number) {}

  /** The response of the flight under way for `key`, or undefined at once when none is (then lead one). */
  join(key: string): Promise<SharedResponse | undefined> | undefined {
    const flight = this.flights.get(key);
    if (flight === undefined) return undefined;
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<undefined>((resolve) => {
      timer = setTimeout(() => resolve(undefined), this.maxWaitMs);
      timer.unref();
    });
    return Promise.race([flight.promise, timeout]).finally(() => clearTimeout(timer));
  }

  /** Starts the flight for `key`; the caller must settle it. */
  lead(key: string): void {
    let settle: Flight['settle'] = () => undefined;
    const promise = new Promise<SharedResponse | undefined>((resolve) => {
      settle = resolve;
    });
    this.flights.set(key, { promise, settle });
  }

  /** Ends the flight for `key` (idempotent): followers get `shared`, or run the route when undefined. */
  settle(key: string, shared: SharedResponse | undefined): void {
    const flight = this.flights.get(key);
    if (flight === undefined) return;
    this.flights.delete(key);
    flight.settle(shared);
  }

  get inFlight(): number {
    return this.flights.size;
  }
}
