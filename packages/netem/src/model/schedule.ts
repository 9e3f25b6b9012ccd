/**
 * Evaluates a server's piecewise schedule: the link in force at any scenario time, and
 * the outage window (if any) covering it.
 */
import { DEFAULT_PARETO_SHAPE, type DurationSpec } from './scenario-schema.js';
import type { BrownoutWindow, LinkProfile, LinkSharing, OutageWindow, Scenario, ServerScenario, StallSpec, Transition } from './scenario.js';

interface Keyframe {
  atMs: number;
  transition: Transition;
  /** The complete link once this entry has taken effect. */
  link: LinkProfile;
}

function lerp(from: number, to: number, fraction: number): number {
  return from + (to - from) * fraction;
}

/** Ramps one duration into another; distributions of different kinds switch at the end. */
export function interpolateDuration(from: DurationSpec, to: DurationSpec, fraction: number): DurationSpec {
  if (typeof from === 'number' && typeof to === 'number') return lerp(from, to, fraction);
  if (typeof from === 'number' || typeof to === 'number' || from.distribution !== to.distribution) {
    return fraction < 1 ? from : to;
  }
  const result: DurationSpec = { distribution: to.distribution, meanMs: lerp(from.meanMs, to.meanMs, fraction) };
  if (from.stdDevMs !== undefined || to.stdDevMs !== undefined) {
    result.stdDevMs = lerp(from.stdDevMs ?? 0, to.stdDevMs ?? 0, fraction);
  }
  if (from.shape !== undefined || to.shape !== undefined) {
    result.shape = lerp(from.shape ?? DEFAULT_PARETO_SHAPE, to.shape ?? DEFAULT_PARETO_SHAPE, fraction);
  }
  const minMs = from.minMs !== undefined && to.minMs !== undefined ? lerp(from.minMs, to.minMs, fraction) : to.minMs;
  const maxMs = from.maxMs !== undefined && to.maxMs !== undefined ? lerp(from.maxMs, to.maxMs, fraction) : to.maxMs;
  if (minMs !== undefined) result.minMs = minMs;
  if (maxMs !== undefined) result.maxMs = maxMs;
  return result;
}

function interpolateStall(from: StallSpec | null | undefined, to: StallSpec | null | undefined, fraction: number): StallSpec | null {
  if (!from && !to) return null;
  // "No stall" ramps as a stall of probability 0 with the other side's duration.
  const start = from ?? { ...to!, probability: 0 };
  const end = to ?? { ...from!, probability: 0 };
  const stall: StallSpec = {
    probability: lerp(start.probability, end.probability, fraction),
    durationMs: interpolateDuration(start.durationMs, end.durationMs, fraction),
  };
  const phase = fraction < 1 ? start.phase : end.phase;
  if (phase !== undefined) stall.phase = phase;
  return stall;
}

function interpolateBandwidth(from: number | null | undefined, to: number | null | undefined, fraction: number): number | null {
  if (typeof from === 'number' && typeof to === 'number') return lerp(from, to, fraction);
  return (fraction < 1 ? from : to) ?? null;
}

/** The link `fraction` of the way from one state to the next. */
export function interpolateLink(from: LinkProfile, to: LinkProfile, fraction: number): LinkProfile {
  return {
    delayMs: interpolateDuration(from.delayMs, to.delayMs, fraction),
    bandwidthBytesPerSec: interpolateBandwidth(from.bandwidthBytesPerSec, to.bandwidthBytesPerSec, fraction),
    stall: interpolateStall(from.stall, to.stall, fraction),
  };
}

/** Applies a partial change on top of a complete link. */
export function applyLinkChange(base: LinkProfile, change: Partial<LinkProfile>): LinkProfile {
  const link: LinkProfile = { ...base };
  if (change.delayMs !== undefined) link.delayMs = change.delayMs;
  if (change.bandwidthBytesPerSec !== undefined) link.bandwidthBytesPerSec = change.bandwidthBytesPerSec;
  if (change.stall !== undefined) link.stall = change.stall;
  return link;
}

/** One server's scenario, compiled for fast evaluation at any time. */
export class ServerTimeline {
  readonly name: string;
  readonly label: string | undefined;
  private readonly keyframes: Keyframe[];
  /** Sorted by fromMs; non-overlapping (checked by parseScenario). */
  readonly outages: readonly OutageWindow[];
  readonly brownouts: readonly BrownoutWindow[];
  readonly linkSharing: LinkSharing;

  constructor(name: string, server: ServerScenario) {
    this.name = name;
    this.label = server.label;
    this.brownouts = [...(server.brownouts ?? [])].sort((a, b) => a.fromMs - b.fromMs);
    this.linkSharing = server.linkSharing ?? 'per-response';
    this.keyframes = [{ atMs: 0, transition: 'step', link: applyLinkChange({ delayMs: 0 }, server.link) }];
    for (const entry of server.schedule ?? []) {
      const previous = this.keyframes[this.keyframes.length - 1]!;
      this.keyframes.push({ atMs: entry.atMs, transition: entry.transition ?? 'step', link: applyLinkChange(previous.link, entry.link) });
    }
    this.outages = [...(server.outages ?? [])].sort((a, b) => a.fromMs - b.fromMs);
  }

  /** The link in force at scenario time tMs (before 0: the initial link). */
  linkAt(tMs: number): LinkProfile {
    const frames = this.keyframes;
    let index = 0;
    while (index + 1 < frames.length && frames[index + 1]!.atMs <= tMs) index++;
    const current = frames[index]!;
    const next = frames[index + 1];
    if (next && next.transition === 'linear' && next.atMs > current.atMs && tMs > current.atMs) {
      return interpolateLink(current.link, next.link, (tMs - current.atMs) / (next.atMs - current.atMs));
    }
    return current.link;
  }

  /** The outage covering tMs (fromMs ≤ tMs < toMs), if any. */
  outageAt(tMs: number): OutageWindow | undefined {
    for (const outage of this.outages) {
      if (outage.fromMs > tMs) return undefined;
      if (tMs < outage.toMs) return outage;
    }
    return undefined;
  }

  /** The brownout covering tMs (fromMs ≤ tMs < toMs), if any; the first one when they overlap. */
  brownoutAt(tMs: number): BrownoutWindow | undefined {
    return this.brownouts.find((brownout) => brownout.fromMs <= tMs && tMs < brownout.toMs);
  }

  /** The first outage starting strictly after tMs and no later than untilMs, if any. */
  outageStartingIn(tMs: number, untilMs: number): OutageWindow | undefined {
    for (const outage of this.outages) {
      if (outage.fromMs > untilMs) return undefined;
      if (outage.fromMs > tMs) return outage;
    }
    return undefined;
  }

  /** Times at which the outage state changes, for the emulator's timers. */
  outageBoundariesMs(): number[] {
    return this.outages.flatMap((outage) => [outage.fromMs, outage.toMs]);
  }
}

/** All servers of a scenario, compiled. */
export function compileScenario(scenario: Scenario): Map<string, ServerTimeline> {
  const timelines = new Map<string, ServerTimeline>();
  for (const [name, server] of Object.entries(scenario.servers)) timelines.set(name, new ServerTimeline(name, server));
  return timelines;
}
