/**
 * A preferred server (PlanInput.preferred: for the worker, the own origin of a navigation,
 * whose request the browser already sent as the navigation preload) goes first where the
 * policy predicts no gain elsewhere. "No gain" is the policy's own judgement, with no
 * constant of its own:
 *  - the server is in the equivalent-server set (equivalent-set.ts): the policy already
 *    draws the first attempt among its members at random (Fei et al., INFOCOM 1998), so
 *    taking the preferred member is one of the draws it deems fair; or
 *  - it is the best; or
 *  - its expected time is behind the best's by less than the spread of one request's first
 *    byte on either server (the larger interquartile range of their two distributions): a
 *    gap that small is one the next request's noise decides, not the choice of server.
 * A server that is ejected, never measured, or further behind is not preferred.
 */
import { weightedQuantile, type WeightedSamples } from './latency-sketch.js';
import type { ServerId } from '../../types.js';

export interface Ranked {
  server: ServerId;
  ttfb: WeightedSamples;
}

export function preferredEquivalent<T extends Ranked>(
  preferred: ServerId | undefined,
  best: T,
  ranked: readonly T[],
  members: ReadonlySet<ServerId>,
  expectedMsOf: (scored: T) => number,
): T | undefined {
  if (preferred === undefined) return undefined;
  const candidate = ranked.find((scored) => scored.server === preferred);
  if (candidate === undefined) return undefined;
  if (candidate === best || members.has(preferred)) return candidate;
  const spreadMs = Math.max(interquartileMs(best.ttfb), interquartileMs(candidate.ttfb));
  return expectedMsOf(candidate) - expectedMsOf(best) <= spreadMs ? candidate : undefined;
}

function interquartileMs(samples: WeightedSamples): number {
  return weightedQuantile(samples, 0.75) - weightedQuantile(samples, 0.25);
}
