/**
 * Constants that were plugin options until issue 24: values an operator has no reason to
 * change, each taken from the paper or the measurement cited beside it. The code still reads
 * them from the resolved options (ResolvedOptions includes them), so one place holds each.
 * Passing one as an option (or its flag to webpp-origin) is an error that names it: see
 * docs/origin.md, "Removed options". This repository's tests and benches set some of them
 * through WEBPP_INTERNALS (from '@webpp/origin/_private'), to run a cluster's timers faster.
 */
export const INTERNAL_CONSTANTS = {
  /** Weight of the newest sample in the per-resource service-time EWMA of the statistics (a 10-sample memory). */
  statsEwmaWeight: 0.1,
  /** α: weight of the newest interval's average in the pushed service time (Fei et al. 1998, footnote 3: 0.9). */
  serviceTimeSmoothing: 0.9,
  /** T: a change of at least this share of the value pushed last is pushed at once (Fei et al. 1998, Section 4: 10 %). */
  serviceTimeThreshold: 0.1,
  /** R: the threshold shrinks by this after each interval without a push, so a value is re-pushed every T/R intervals (Fei's ratio T/R = 5). */
  serviceTimeThresholdDecay: 0.02,
  /** Changes are relative to the larger of the pushed value and this, so that sub-millisecond service times do not flap (measured on loopback). */
  serviceTimeFloorMs: 1,
  /** A peer's pushed service time older than this is no longer forwarded in `webpp-load` (three pinger periods, DCWS Table 1's T_pi = 20 s). */
  peerLoadMaxAgeMs: 60_000,
  /** Access counts of the memory cache are halved every such interval (GOS, Chen, Wang and Lau, Section 4.3: LFU-Aging). */
  memoryCacheAgingIntervalMs: 60_000,
  /** Period of the local access-count reports to each object's home (GOS Section 4.4, LAC reports); also the retry period of unacknowledged invalidations. */
  memoryCacheReportIntervalMs: 1000,
  /** A local count reaching this many hits is reported to the object's home at once (GOS Section 4.4). */
  memoryCacheReportThreshold: 32,
  /** Objects whose global count is in this top share of the counts a server knows are hot (GOS Section 4.5). */
  memoryCacheHotShare: 0.1,
  /** How many servers keep a copy of a hot object, the home first (GOS Section 4.5; IBM's accelerator, Song et al. 2002, Section 3.2). */
  memoryCacheHotCopies: 3,
  /** Second chances of an evicted singlet, forwarded to a random peer (GOS Section 4.5, xFS N-chance: N = 2). */
  memoryCacheRecirculation: 2,
  /** A peer whose last load record is older than this is not a candidate co-op (three pinger periods, DCWS Table 1's T_pi = 20 s). */
  replicationPeerMaxAgeMs: 60_000,
  /** Half-life of a client report's weight in the aggregate (30 min: a visitor's network changes within hours, issue 13 §6). */
  clientAggregateHalfLifeMs: 1_800_000,
};

export type InternalConstants = { -readonly [K in keyof typeof INTERNAL_CONSTANTS]: number };

/** Overrides of the constants for this repository's tests and benches: `{ ...options, [WEBPP_INTERNALS]: { memoryCacheReportIntervalMs: 100 } }`. */
export const WEBPP_INTERNALS = Symbol.for('webpp.origin.internals');

/** The CLI flag each removed option had. */
export function removedFlag(name: string): string {
  return name.replace(/[A-Z]/g, (letter) => `-${letter.toLowerCase()}`);
}

/** The constants with the overrides the options carry, if any; numbers >= 0 only. */
export function internalsOf(options: object): InternalConstants {
  const overrides = (options as { [WEBPP_INTERNALS]?: Partial<InternalConstants> })[WEBPP_INTERNALS] ?? {};
  const internals: InternalConstants = { ...INTERNAL_CONSTANTS };
  for (const [name, value] of Object.entries(overrides)) {
    if (!(name in INTERNAL_CONSTANTS) || typeof value !== 'number' || !(value >= 0)) throw new TypeError(`WEBPP_INTERNALS.${name}: not a constant, or not a number >= 0`);
    internals[name as keyof InternalConstants] = value;
  }
  return internals;
}

/** The removed options `options` still gives, in a sentence for WEBPP_ERR_BAD_OPTIONS; undefined when none. */
export function removedOptionsProblem(options: object, name: (option: string) => string): string | undefined {
  const given = Object.keys(options).filter((key) => key in INTERNAL_CONSTANTS);
  if (given.length === 0) return undefined;
  return `${given.map(name).join(', ')}: removed (issue 24), now a constant; delete ${given.length === 1 ? 'it' : 'them'} (docs/origin.md, "Removed options")`;
}
