/**
 * Busy, not dead (issue 13): a timeout on a server that is alive but slow must not eject it
 * as if it were down, nor make the client pile a second request onto the cluster beyond its
 * budget. Envoy's outlier detection ejects on consecutive 5xx and gateway (connect) errors,
 * not on slowness; a slow server is ranked by its (large) estimate instead — the timeout
 * still enters its distribution as a censored sample (server-record.ts).
 *
 * A server counts as busy at a timeout when
 * - its own pushed service time S is fresh (pushMaxAgeMs) and at least
 *   busyServiceShareOfTimeout of the timeout: queueing inside the server explains the wait
 *   (Fei et al., INFOCOM 1998, Section 4.3: S "includes delays incurred because of the need to
 *   process other requests at the server"); a crashed server pushes nothing new, and its last
 *   value, from before the crash, is its normal one; or
 * - it answered another exchange of this client while the timed-out one waited (it is alive).
 */
import type { WebppOptions } from './options.js';
import type { PushedLoad } from './pushed-load.js';
import type { ServerRecord } from './server-record.js';

export function busyAtTimeout(record: ServerRecord, pushed: PushedLoad | undefined, timeoutMs: number, nowMs: number, options: WebppOptions): boolean {
  const sentAtMs = nowMs - timeoutMs;
  if (record.lastHeadAtMs > sentAtMs) return true;
  if (options.pushMaxAgeMs <= 0 || pushed?.serviceMs === undefined || nowMs - pushed.atMs > options.pushMaxAgeMs) return false;
  return pushed.serviceMs >= options.busyServiceShareOfTimeout * timeoutMs;
}
