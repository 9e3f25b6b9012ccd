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
 * extra bytes stay with the bodies that gain.
 *
 * **A pace not known, or a prediction that failed: rent or buy.** A server whose pace is not
 * measured yet (a first page, planned before any body ended), or a body that runs past the
 * time its measured pace predicted (the link slowed), gives no restHere to compare. Waiting
 * on it is renting, the fetch elsewhere is buying at `elsewhere`: the deterministic
 * ski-rental rule — wait until the body has taken `elsewhere`, then start the fetch elsewhere
 * — costs at most twice what knowing the rest in advance would, whatever the rest is
 * (Karlin, Manasse, Rudolph and Sleator, "Competitive snoopy caching", Algorithmica 1988; the
 * 2-competitive rent-or-buy). A driver that can wait (HeadFacts.deferrable) is told when to
 * ask again (`startAfterMs`); it asks then with the body's time so far, and the rule runs
 * again on what is known by then (other bodies have ended meanwhile, and measured their
 * servers). With no alternative measured yet it asks again after the time so far, doubling.
 */
import type { HeadFacts, HeadRedecision } from '../../engine/policy-types.js';
import type { ServerId } from '../../types.js';
import { connectionsFor, queueAhead } from './queue-ahead.js';
import type { ServerRecord } from './server-record.js';

/** The fetch elsewhere must beat the rest here by this factor: saved time ≥ its own cost (see above). */
const WORTH_FACTOR = 2;
/** The first time a driver asks again when no alternative is measured yet (ms); then the body's time so far (doubling). */
const FIRST_RECHECK_MS = 50;
/**
 * The shortest wait before asking again (ms): a few timer ticks, so that a body asks at most
 * a handful of times (the waits grow with the body's time so far).
 */
const MIN_RECHECK_MS = 10;

export function redecideAtHead(facts: HeadFacts, records: ReadonlyMap<ServerId, ServerRecord>): HeadRedecision | undefined {
  const here = records.get(facts.server);
  const sizeBytes = facts.contentLengthBytes;
  if (here === undefined || !(sizeBytes > 0)) return undefined;
  const elapsedMs = Math.max(0, facts.bodyElapsedMs ?? 0);
  const hereRate = here.throughput.bytesPerMs();
  let best: { server: ServerId; elsewhereMs: number } | undefined;
  for (const server of facts.alternatives) {
    const record = records.get(server);
    const rate = record?.throughput.bytesPerMs();
    if (record === undefined || record.state === 'failed' || !record.measured || rate === undefined || !(rate > 0)) continue;
    const ttfbMs = record.ttfb.meanMs();
    const queue = queueAhead(server, facts.inFlight, sizeBytes, ttfbMs, rate, facts.nowMs, connectionsFor(record.protocol), record.concurrency.perExchangeMs());
    const elsewhereMs = ttfbMs + sizeBytes / rate + Math.max(queue.connectionWaitMs, queue.serverWaitMs) + queue.sharedLinkMs;
    if (best === undefined || elsewhereMs < best.elsewhereMs) best = { server, elsewhereMs };
  }
  // The rest here as its measured pace predicts it (its body shares the link with this client's other bodies there).
  let predictedRestMs: number | undefined;
  if (hereRate !== undefined && hereRate > 0) {
    const hereQueue = queueAhead(facts.server, facts.inFlight, sizeBytes, 0, hereRate, facts.nowMs, connectionsFor(here.protocol));
    predictedRestMs = sizeBytes / hereRate + Math.max(0, hereQueue.sharedLinkMs - sizeBytes / hereRate) - elapsedMs;
  }
  const onTime = predictedRestMs !== undefined && predictedRestMs > 0;
  if (best === undefined) {
    // Nothing to compare with yet: a driver that can wait asks again once others may be measured.
    if (!facts.deferrable) return undefined;
    const recheckMs = Math.max(FIRST_RECHECK_MS, elapsedMs, onTime ? (predictedRestMs as number) : 0);
    return { server: facts.server, restHereMs: predictedRestMs ?? Number.NaN, elsewhereMs: Number.NaN, startAfterMs: recheckMs };
  }
  if (onTime) {
    const restHereMs = predictedRestMs as number;
    if (restHereMs > WORTH_FACTOR * best.elsewhereMs) return { server: best.server, restHereMs, elsewhereMs: best.elsewhereMs };
    // On time and not worth a second fetch: ask again when it should have ended (then it is late, or done).
    return facts.deferrable ? { server: best.server, restHereMs, elsewhereMs: best.elsewhereMs, startAfterMs: Math.max(MIN_RECHECK_MS, restHereMs, elapsedMs) } : undefined;
  }
  // Pace unknown or the prediction failed: rent until the body has taken `elsewhere`, then buy.
  if (!facts.deferrable) return undefined;
  const waitMs = best.elsewhereMs - elapsedMs;
  return { server: best.server, restHereMs: Number.NaN, elsewhereMs: best.elsewhereMs, ...(waitMs > 0 ? { startAfterMs: Math.max(MIN_RECHECK_MS, waitMs) } : {}) };
}
