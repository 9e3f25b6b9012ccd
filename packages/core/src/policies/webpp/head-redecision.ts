/**
 * Decide again at the response head (issue 22 §2). When the head arrives, the size
 * (Content-Length) and this server's pace are known: the rest of the body takes
 *
 *   restHere = L / rate_here   (+ the queue ahead on its link)
 *
 * and a whole fetch of it elsewhere, started now, takes
 *
 *   elsewhere = E[first byte_a] + L / rate_a + queue_a.
 *
 * Keeping the first body to finish, the fetch elsewhere saves at least restHere − elsewhere
 * and costs a second transfer of about `elsewhere` of the other replica's time. It is worth
 * that cost when the time saved exceeds it (the hedge's rule in plan.ts, addHedges:
 * J = E[T] + λ·P(fire) with λ the partner's expected time, after C3's "do not amplify
 * load", Suresh et al., NSDI 2015), i.e. when
 *
 *   restHere − elsewhere > elsewhere  ⇔  restHere > 2 · elsewhere.
 *
 * Dean and Barroso's tied requests ("The Tail at Scale", CACM 2013) race two copies and keep
 * the first; here the second copy is sent only when the first is known to be slow, so the
 * extra bytes stay with the bodies that gain. A server whose pace is not measured yet is
 * never second-guessed (nothing to compare), and the race is paid from the one extra budget.
 */
import type { HeadFacts, HeadRedecision } from '../../engine/policy-types.js';
import type { ServerId } from '../../types.js';
import { queueAhead } from './queue-ahead.js';
import type { ServerRecord } from './server-record.js';

/** The fetch elsewhere must beat the rest here by this factor: saved time ≥ its own cost (see above). */
const WORTH_FACTOR = 2;

export function redecideAtHead(facts: HeadFacts, records: ReadonlyMap<ServerId, ServerRecord>): HeadRedecision | undefined {
  const here = records.get(facts.server);
  const hereRate = here?.throughput.bytesPerMs();
  const sizeBytes = facts.contentLengthBytes;
  if (here === undefined || hereRate === undefined || !(hereRate > 0) || !(sizeBytes > 0)) return undefined;
  // The body shares the link with this client's other bodies there (itself excluded: it is in flight).
  const hereQueue = queueAhead(facts.server, facts.inFlight, sizeBytes, 0, hereRate, facts.nowMs);
  const restHereMs = sizeBytes / hereRate + Math.max(0, hereQueue.sharedLinkMs - sizeBytes / hereRate);
  let best: HeadRedecision | undefined;
  for (const server of facts.alternatives) {
    const record = records.get(server);
    const rate = record?.throughput.bytesPerMs();
    if (record === undefined || record.state === 'failed' || !record.measured || rate === undefined || !(rate > 0)) continue;
    const ttfbMs = record.ttfb.meanMs();
    const queue = queueAhead(server, facts.inFlight, sizeBytes, ttfbMs, rate, facts.nowMs);
    const elsewhereMs = ttfbMs + sizeBytes / rate + queue.connectionWaitMs + queue.sharedLinkMs;
    if (restHereMs > WORTH_FACTOR * elsewhereMs && (best === undefined || elsewhereMs < best.elsewhereMs)) {
      best = { server, restHereMs, elsewhereMs };
    }
  }
  return best;
}
