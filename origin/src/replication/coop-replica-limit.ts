/**
 * The largest replica a co-op stores (its `maxReplicaBytes`), carried in its peer load record
 * so that a home places there only what the co-op's lazy fetch will accept (lazy/shared-fetch.ts
 * refuses larger bodies: the co-op would answer 502 to every request bound to it until the
 * placement is withdrawn, T_home later). DCWS (Baker and Moon 1998, Section 4.2) picks the
 * least-loaded co-op; one that cannot hold the document is no candidate.
 */
import type { LoadRecord } from '../sync/load-record.js';
import type { PeerState } from '../sync/peer-state.js';

const FIELD = 'maxReplicaBytes';

/** Adds this server's limit to the records it sends its peers. */
export function announceReplicaLimit(state: PeerState, maxReplicaBytes: number): void {
  state.registerField(FIELD, () => maxReplicaBytes);
}

/** A peer's limit from its record; `fallback` (this server's own) when it sends none (an older peer). */
export function replicaLimitOf(record: LoadRecord, fallback: number): number {
  const value = record.fields[FIELD];
  return typeof value === 'number' && Number.isSafeInteger(value) && value > 0 ? value : fallback;
}
