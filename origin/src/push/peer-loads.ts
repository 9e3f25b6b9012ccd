/**
 * The latest service time each peer pushed (issue 13), as forwarded to clients in the
 * `webpp-load` header, so that a client learns a replica's load without having talked to it
 * (Fei et al. 1998, Section 4: servers push to the resolvers that serve their clients; here
 * the resolver is every client's worker, reached through whichever replica it talks to).
 *
 * There is no channel of its own: the value rides in the peer load record (sync/peer-state.ts,
 * the signed `webpp-peer-state` header on every peer call) as two extra fields,
 * `serviceMs` (the value pushed last) and `serviceAgeMs` (how long before the record was
 * made it was pushed), and a third once the server has one, `utilisation` (the busy share of
 * its last measurement interval, 0–1, utilisation.ts; not the record's own event-loop
 * `utilisation` of the replication sampler). A record without a valid one, e.g. from an older
 * peer, simply forwards no `util`. The record brings its replay guard with it: PeerState keeps a record
 * only when it is newer than the one held for that sender and within the clock skew.
 *
 * Times are this server's clock: a value in a record received at `receivedAtMs` was pushed at
 * receivedAtMs − serviceAgeMs, so clocks need not agree.
 */
import { canonicalUrl, type PushedLoad } from '@webpp/core';
import type { LoadField } from '../sync/load-record.js';
import type { PeerState } from '../sync/peer-state.js';

/** Names of the fields in the peer load record. */
const SERVICE_MS_FIELD = 'serviceMs';
const SERVICE_AGE_FIELD = 'serviceAgeMs';
const UTILISATION_FIELD = 'utilisation';

/** Largest service time or age taken from a peer's record (one day, ms). */
const MAX_MS = 86_400_000;

export interface OwnServiceTime {
  serviceMs: number;
  /** The busy share of the last interval (0–1), once one has closed. */
  utilisation?: number;
  /** How long ago it was pushed (ms). */
  ageMs: number;
}

/** Adds this server's pushed value to the records it sends its peers; returns a function that removes it. */
export function addServiceTimeFields(state: PeerState, own: () => OwnServiceTime | undefined): () => void {
  const removeValue = state.registerField(SERVICE_MS_FIELD, () => round(own()?.serviceMs));
  const removeAge = state.registerField(SERVICE_AGE_FIELD, () => round(own()?.ageMs));
  const removeUtilisation = state.registerField(UTILISATION_FIELD, () => round(own()?.utilisation));
  return () => {
    removeValue();
    removeAge();
    removeUtilisation();
  };
}

export class PeerLoads {
  /** @param state the peer load records (undefined without peers or a cluster secret: nothing to forward). */
  constructor(private readonly state: PeerState | undefined) {}

  /** Every peer's value pushed within `maxAgeMs` (this server's clock). */
  fresh(nowMs: number, maxAgeMs: number): PushedLoad[] {
    const fresh: PushedLoad[] = [];
    for (const held of this.state?.records() ?? []) {
      const serviceMs = msOf(held.record.fields[SERVICE_MS_FIELD]);
      const server = originOf(held.record.server);
      if (serviceMs === undefined || server === undefined) continue;
      const ageMs = Math.max(0, nowMs - (held.receivedAtMs - (msOf(held.record.fields[SERVICE_AGE_FIELD]) ?? 0)));
      if (ageMs > maxAgeMs) continue;
      // Malformed or absent (an older peer): the value is forwarded without its utilisation.
      const utilisation = shareOf(held.record.fields[UTILISATION_FIELD]);
      fresh.push(utilisation === undefined ? { server, serviceMs, ageMs } : { server, serviceMs, utilisation, ageMs });
    }
    return fresh;
  }
}

function msOf(field: LoadField | undefined): number | undefined {
  return typeof field === 'number' && Number.isFinite(field) && field >= 0 && field <= MAX_MS ? field : undefined;
}

function shareOf(field: LoadField | undefined): number | undefined {
  return typeof field === 'number' && Number.isFinite(field) && field >= 0 && field <= 1 ? field : undefined;
}

/** To 0.01 (ms, or a share): the record carries no more precision than the headers use. */
function round(value: number | undefined): number | undefined {
  return value === undefined ? undefined : Math.round(value * 100) / 100;
}

function originOf(value: string): string | undefined {
  const url = canonicalUrl(value);
  if (url === undefined) return undefined;
  const parsed = new URL(url);
  return parsed.pathname === '/' && parsed.search === '' ? parsed.origin : undefined;
}
