/**
 * The marker of a replica placed by load-driven replication (issue 14; DCWS, Baker and
 * Moon 1998), stored with its (logical, physical) pair in the replication directory, so
 * that every server knows which replicas are automatic, which home placed them and when:
 * the home withdraws them (never sooner than T_home after `placedAtMs`), any server
 * recalls those of a co-op that is down, a co-op fetches the content lazily from `home`
 * (or any other holder), and co-ops' acceptance limits (T_coop) are checked across homes.
 * Replicas added by hand (management API, directory file) have no marker and are never
 * touched by the automatic decisions.
 */
export interface AutomaticPlacement {
  /** Public URL of the home server that placed it (holds the permanent copy). */
  home: string;
  /** The home's clock when it was placed. */
  placedAtMs: number;
  /** Why, in words (for the log and stats). */
  reason: string;
  /** Body size as the home measured it, bytes (counted against the co-op's byte limit). */
  sizeBytes: number;
}

/** One automatic pair of the directory. */
export interface AutomaticReplica {
  logical: string;
  physical: string;
  placement: AutomaticPlacement;
}

/** The marker in a stored pair value, if it has a valid one (peers may run other versions). */
export function placementOf(value: unknown): AutomaticPlacement | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const automatic = (value as { automatic?: unknown }).automatic;
  if (typeof automatic !== 'object' || automatic === null) return undefined;
  const { home, placedAtMs, reason, sizeBytes } = automatic as Record<string, unknown>;
  if (typeof home !== 'string' || typeof placedAtMs !== 'number' || !Number.isFinite(placedAtMs)) return undefined;
  return {
    home,
    placedAtMs,
    reason: typeof reason === 'string' ? reason : '',
    sizeBytes: typeof sizeBytes === 'number' && Number.isFinite(sizeBytes) && sizeBytes >= 0 ? sizeBytes : 0,
  };
}
