/**
 * What the link does to one request: drawn once, when the request arrives, from the link
 * in force at that time. The emulator carries a plan out on a real socket; the simulator
 * turns it into virtual time with responseTiming().
 */
import { sampleDuration, UNIFORMS_PER_DRAW } from './distributions.js';
import type { RandomSource } from './random.js';
import type { LinkProfile, StallPhase } from './scenario.js';

export interface RequestPlan {
  /** Round-trip delay added before the first byte: half on the way in, half on the way out. */
  delayMs: number;
  /** Length of this request's stall; 0 when it does not stall. */
  stallMs: number;
  stallPhase: StallPhase;
  /** For a body stall: the fraction of the body sent before it, in [0, 1). */
  stallAfterFraction: number;
  /** Response throughput; null = unlimited. */
  bandwidthBytesPerSec: number | null;
}

/** Every plan consumes exactly this many uniforms, so streams stay aligned. */
export const UNIFORMS_PER_PLAN = 2 * UNIFORMS_PER_DRAW + 2;

export function planRequest(link: LinkProfile, random: RandomSource): RequestPlan {
  const delayMs = sampleDuration(link.delayMs, random);
  const stallCoin = random();
  const stallAfterFraction = random();
  const stallDurationMs = link.stall ? sampleDuration(link.stall.durationMs, random) : (random(), random(), 0);
  const stalls = link.stall !== null && link.stall !== undefined && stallCoin < link.stall.probability;
  return {
    delayMs,
    stallMs: stalls ? stallDurationMs : 0,
    stallPhase: link.stall?.phase ?? 'first-byte',
    stallAfterFraction,
    bandwidthBytesPerSec: link.bandwidthBytesPerSec ?? null,
  };
}

/** When the first byte and the last byte arrive, relative to sending the request. */
export interface ResponseTiming {
  firstByteMs: number;
  completeMs: number;
}

/**
 * The idealised timing of a response of `bodyBytes` under a plan, with the server's own
 * service time `serviceMs`: first byte after the round trip (plus a first-byte stall),
 * then the body at the plan's bandwidth (plus a body stall).
 */
export function responseTiming(plan: RequestPlan, bodyBytes: number, serviceMs = 0): ResponseTiming {
  const firstByteStallMs = plan.stallPhase === 'first-byte' ? plan.stallMs : 0;
  const bodyStallMs = plan.stallPhase === 'body' ? plan.stallMs : 0;
  const firstByteMs = plan.delayMs + serviceMs + firstByteStallMs;
  const transferMs = plan.bandwidthBytesPerSec === null ? 0 : (bodyBytes / plan.bandwidthBytesPerSec) * 1000;
  return { firstByteMs, completeMs: firstByteMs + transferMs + bodyStallMs };
}
