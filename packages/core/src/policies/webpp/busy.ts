/**
 * Busy, not dead (issue 13, issue 22 §2): a timeout on a server that is alive but slow must
 * not eject it as if it were down. Envoy's outlier detection ejects on consecutive 5xx and
 * gateway (connect) errors, not on slowness; a slow server is ranked by its (large) estimate
 * instead — the timeout still enters its distribution as a censored sample (server-record.ts).
 *
 * A server counts as alive at a timeout when it answered another exchange of this client
 * while the timed-out one waited (the engine says so in the sample,
 * ExchangeSample.answeredWhileWaiting, from heads whose bodies still stream; policy.ts also
 * checks the heads of samples learnt since), or when it is queueing (queueingAtTimeout).
 */
import type { WebppOptions } from './options.js';
import type { PushedLoad } from './pushed-load.js';

/**
 * The server's own pushed service time S is fresh (pushMaxAgeMs) and at least
 * busyServiceShareOfTimeout of the timeout: queueing inside the server explains the wait
 * (Fei et al., INFOCOM 1998, Section 4.3: S "includes delays incurred because of the need to
 * process other requests at the server"). A crashed server pushes nothing new, and its last
 * value, from before the crash, is its normal one. A queueing server is the one case where a
 * failover waits for a token in hand (policy.ts, admitFailover): a saturated cluster must not
 * get more load from its clients' timeouts.
 */
export function queueingAtTimeout(pushed: PushedLoad | undefined, timeoutMs: number, nowMs: number, options: WebppOptions): boolean {
  if (options.pushMaxAgeMs <= 0 || pushed?.serviceMs === undefined || nowMs - pushed.atMs > options.pushMaxAgeMs) return false;
  return pushed.serviceMs >= options.busyServiceShareOfTimeout * timeoutMs;
}
