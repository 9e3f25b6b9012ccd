/**
 * The demo's emulated network links (one @webpp/netem link emulator in front of each
 * replica server): one near and steady, one far, one jittery that sometimes stalls.
 */
import type { DurationSpec, LinkProfile } from '@webpp/netem';

export interface ReplicaLinkSpec {
  /** Host label and replica id: "a" serves http://a.localhost:PORT. */
  id: string;
  title: string;
  link: LinkProfile;
}

export const DEFAULT_REPLICA_LINKS: readonly ReplicaLinkSpec[] = [
  {
    id: 'a',
    title: 'Near and steady',
    link: { delayMs: { distribution: 'normal', meanMs: 10, stdDevMs: 2, minMs: 5 } },
  },
  {
    id: 'b',
    title: 'Far away',
    link: { delayMs: { distribution: 'normal', meanMs: 120, stdDevMs: 10, minMs: 90 }, bandwidthBytesPerSec: 4_000_000 },
  },
  {
    id: 'c',
    title: 'Jittery, sometimes stalls',
    link: {
      delayMs: { distribution: 'lognormal', meanMs: 70, stdDevMs: 50, minMs: 15, maxMs: 600 },
      // A lost packet now and then: the first byte comes 6 s late, beyond the worker's timeout.
      stall: { probability: 0.04, durationMs: 6000, phase: 'first-byte' },
    },
  },
];

/** What "Slow down" adds to a link's round-trip delay. */
export const SLOW_DOWN_EXTRA_DELAY_MS = 400;

/** The link's delay with SLOW_DOWN_EXTRA_DELAY_MS added, keeping its shape. */
export function slowedDelay(delayMs: DurationSpec): DurationSpec {
  if (typeof delayMs === 'number') return delayMs + SLOW_DOWN_EXTRA_DELAY_MS;
  return {
    ...delayMs,
    meanMs: delayMs.meanMs + SLOW_DOWN_EXTRA_DELAY_MS,
    ...(delayMs.minMs !== undefined ? { minMs: delayMs.minMs + SLOW_DOWN_EXTRA_DELAY_MS } : {}),
    ...(delayMs.maxMs !== undefined ? { maxMs: delayMs.maxMs + SLOW_DOWN_EXTRA_DELAY_MS } : {}),
  };
}

/** "8 ms ± 1.5 ms", "45 ms ± 35 ms, stalls 2.5 s (4 %)". */
export function describeLink(link: LinkProfile): string {
  const parts = [describeDuration(link.delayMs) + ' round trip'];
  if (link.bandwidthBytesPerSec) parts.push(`${(link.bandwidthBytesPerSec / 1_000_000).toFixed(0)} MB/s`);
  if (link.stall && link.stall.probability > 0) {
    parts.push(`stalls ${describeDuration(link.stall.durationMs)} (${Math.round(link.stall.probability * 100)} %)`);
  }
  return parts.join(', ');
}

function describeDuration(spec: DurationSpec): string {
  if (typeof spec === 'number') return formatMs(spec);
  const sd = spec.stdDevMs ?? 0;
  return sd > 0 ? `${formatMs(spec.meanMs)} ± ${formatMs(sd)}` : formatMs(spec.meanMs);
}

function formatMs(valueMs: number): string {
  return valueMs >= 1000 ? `${Number((valueMs / 1000).toFixed(1))} s` : `${Number(valueMs.toFixed(1))} ms`;
}
