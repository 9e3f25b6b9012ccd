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
 * servers). With no alternative measured yet it asks again after the time so far, doubling;
 * while an alternative is ejected, at least once per probe interval (probeBackoffBaseMs), so
 * that a replica probed back takes over the rest of a crawling body within about a second.
 *
 * **While the body streams: its own pace.** A driver that counts the body's bytes
 * (HeadFacts.bodyBytesSoFar) can fetch just the rest elsewhere (a ranged GET, as resume
 * does), and tells what this body has done so far. The same rule then runs on the present:
 *
 *   restHere  = (L − received) · elapsed / received       (this body's own pace so far)
 *   elsewhere = E[first byte_a] + (L − received) / rate_a + queue_a
 *
 * and the ranged fetch starts once restHere > 2 · elsewhere. A link that slows down or
 * stalls mid-body (its pace collapses after the head) is caught at the next look: the driver
 * is told to look again after the body's time so far (doubling from FIRST_RECHECK_MS), and
 * never later than min(restHere, elsewhere), so that between two looks it rents for at most
 * the price of buying. Until it has MIN_PACE_BYTES the body has no pace of its own: its
 * server's measured pace, then rent or buy, as above.
 */
import type { HeadFacts, HeadRedecision } from '../../engine/policy-types.js';
import type { ServerId } from '../../types.js';
import { connectionsFor, queueAhead } from './queue-ahead.js';
import type { WebppOptions } from './options.js';
import { harmonicMeanRate, type ServerRecord } from './server-record.js';

/** The fetch elsewhere must beat the rest here by this factor: saved time ≥ its own cost (see above). */
export const WORTH_FACTOR = 2;
/** The first time a driver asks again when no alternative is measured yet (ms); then the body's time so far (doubling). */
const FIRST_RECHECK_MS = 50;
/**
 * The shortest wait before asking again (ms): a few timer ticks, so that a body asks at most
 * a handful of times (the waits grow with the body's time so far).
 */
const MIN_RECHECK_MS = 10;
/**
 * A body's own pace is read once it has brought this many bytes (the least body the
 * throughput estimate takes, WebppOptions.minThroughputSampleBytes' default): fewer arrive in
 * one or two segments, whose timing is the connection's, not the link's.
 */
export const MIN_PACE_BYTES = 8_192;

export function redecideAtHead(facts: HeadFacts, records: ReadonlyMap<ServerId, ServerRecord>, options: Pick<WebppOptions, 'probeBackoffBaseMs'>): HeadRedecision | undefined {
  const here = records.get(facts.server);
  const sizeBytes = facts.contentLengthBytes;
  if (here === undefined || !(sizeBytes > 0)) return undefined;
  const elapsedMs = Math.max(0, facts.bodyElapsedMs ?? 0);
  // A driver that counts the body's bytes fetches only the rest elsewhere (a ranged GET).
  const paced = facts.bodyBytesSoFar !== undefined;
  const receivedBytes = Math.min(sizeBytes, Math.max(0, facts.bodyBytesSoFar ?? 0));
  const restBytes = sizeBytes - receivedBytes;
  if (restBytes === 0) return undefined; // the body is all here
  const hereRate = here.throughput.bytesPerMs();
  // An alternative whose first byte is measured but not its link is assumed like the other
  // alternatives that are measured: the harmonic mean of their rates, as plan.ts ranks it (a
  // replica rarely used has often no body measured, and is then the one to finish a crawling
  // body). Not this server's: its link is the one in question.
  const fallbackRate = harmonicMeanRate(facts.alternatives, records);
  let best: { server: ServerId; elsewhereMs: number } | undefined;
  for (const server of facts.alternatives) {
    const record = records.get(server);
    const rate = record?.throughput.bytesPerMs() ?? fallbackRate;
    if (record === undefined || record.state === 'failed' || !record.measured || rate === undefined || !(rate > 0)) continue;
    const ttfbMs = record.ttfb.meanMs();
    const queue = queueAhead(server, facts.inFlight, restBytes, ttfbMs, rate, facts.nowMs, connectionsFor(record.protocol), record.concurrency.perExchangeMs());
    const elsewhereMs = ttfbMs + restBytes / rate + Math.max(queue.connectionWaitMs, queue.serverWaitMs) + queue.sharedLinkMs;
    if (best === undefined || elsewhereMs < best.elsewhereMs) best = { server, elsewhereMs };
  }
  let predictedRestMs: number | undefined;
  if (receivedBytes >= MIN_PACE_BYTES && elapsedMs > 0) {
    // The body's own pace so far: what the link does now, slowed or stalled after the head included.
    predictedRestMs = (restBytes * elapsedMs) / receivedBytes;
  } else if (hereRate !== undefined && hereRate > 0) {
    // The rest here as its measured pace predicts it (its body shares the link with this client's other bodies there).
    const hereQueue = queueAhead(facts.server, facts.inFlight, sizeBytes, 0, hereRate, facts.nowMs, connectionsFor(here.protocol));
    predictedRestMs = sizeBytes / hereRate + Math.max(0, hereQueue.sharedLinkMs - sizeBytes / hereRate) - elapsedMs;
  }
  const onTime = predictedRestMs !== undefined && predictedRestMs > 0;
  if (best === undefined) {
    // Nothing to compare with yet: a driver that can wait asks again once others may be measured, or probed back.
    if (!facts.deferrable) return undefined;
    // After the body's time so far (doubling), not after its predicted rest (minutes on a
    // crawling link): an alternative priced meanwhile takes over within about twice the time
    // so far, and a body asks O(log) times. Not later than one probe interval while an
    // alternative is ejected: a replica probed back is used for the rest.
    const ejected = facts.alternatives.some((server) => records.get(server)?.state === 'failed');
    const doublingMs = Math.max(FIRST_RECHECK_MS, elapsedMs);
    const recheckMs = ejected ? Math.min(doublingMs, options.probeBackoffBaseMs) : doublingMs;
    return { server: facts.server, restHereMs: predictedRestMs ?? Number.NaN, elsewhereMs: Number.NaN, startAfterMs: Math.max(MIN_RECHECK_MS, recheckMs) };
  }
  if (onTime) {
    const restHereMs = predictedRestMs as number;
    if (restHereMs > WORTH_FACTOR * best.elsewhereMs) return { server: best.server, restHereMs, elsewhereMs: best.elsewhereMs };
    if (!facts.deferrable) return undefined;
    // On time and not worth a second fetch: ask again when it should have ended (then it is
    // late, or done). A driver that counts bytes is asked sooner, as the body's time so far
    // doubles (from FIRST_RECHECK_MS) and within one `elsewhere`: its pace may collapse after
    // the head, and between two looks the body then rents for at most the price of buying.
    const recheckMs = paced ? Math.min(Math.max(FIRST_RECHECK_MS, elapsedMs), restHereMs, best.elsewhereMs) : Math.max(restHereMs, elapsedMs);
    return { server: best.server, restHereMs, elsewhereMs: best.elsewhereMs, startAfterMs: Math.max(MIN_RECHECK_MS, recheckMs) };
  }
  // Pace unknown or the prediction failed: rent until the body has taken `elsewhere`, then buy.
  if (!facts.deferrable) return undefined;
  const waitMs = best.elsewhereMs - elapsedMs;
  return { server: best.server, restHereMs: Number.NaN, elsewhereMs: best.elsewhereMs, ...(waitMs > 0 ? { startAfterMs: Math.max(MIN_RECHECK_MS, waitMs) } : {}) };
}
