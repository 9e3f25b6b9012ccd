/**
 * What this client already has in flight to each server (issue 22 §2, bursts): one entry per
 * exchange the engine sent for a page's request (first tries, hedges, failovers, resumes),
 * with the body size it expects, when it was sent and when its head came. The engine keeps
 * it; the policy reads a snapshot in every plan (PlanInput.inFlight) and prices the queue a
 * new request would join (queue-ahead.ts). An exchange leaves when it ends: lost, failed,
 * cancelled, or its body complete. A driver that does not report bodies (the worker streams
 * them to the page) leaves its winner in the ledger; the policy counts its body as done once
 * the measured throughput would have carried it, and the ledger forgets it after
 * FORGET_AFTER_HEAD_MS.
 */
import type { ServerId } from '../types.js';
import type { InFlightExchange } from './policy-types.js';

/** An exchange with a head this old is forgotten (ms): far past any body the engine could be waiting for. */
const FORGET_AFTER_HEAD_MS = 60_000;
/** Most entries kept (a page of 100 resources, hedged and failed over, fits many times). */
const MAX_ENTRIES = 1_024;

export interface InFlightEntry extends InFlightExchange {
  /** Ends the entry (idempotent). */
  end(): void;
  /** The head came at `atMs`. */
  head(atMs: number): void;
}

export class InFlightLedger {
  private readonly entries = new Set<InFlightEntry & { headAtMs?: number }>();

  /** An exchange to `server` of `sizeBytes` (0: unknown) was sent at `nowMs`. */
  start(server: ServerId, sizeBytes: number, nowMs: number): InFlightEntry {
    if (this.entries.size >= MAX_ENTRIES) this.prune(nowMs, true);
    const entries = this.entries;
    const entry: InFlightEntry & { headAtMs?: number } = {
      server,
      sizeBytes,
      sentAtMs: nowMs,
      end: () => void entries.delete(entry),
      head: (atMs: number) => {
        entry.headAtMs ??= atMs;
      },
    };
    entries.add(entry);
    return entry;
  }

  /** Exchanges to `server` in flight now (all servers without one). */
  count(server: ServerId): number {
    let count = 0;
    for (const entry of this.entries) if (entry.server === server) count++;
    return count;
  }

  /** A plain snapshot for a plan: what is in flight now. */
  snapshot(nowMs: number): InFlightExchange[] {
    this.prune(nowMs, false);
    return [...this.entries].map(({ server, sizeBytes, sentAtMs, headAtMs }) => (headAtMs === undefined ? { server, sizeBytes, sentAtMs } : { server, sizeBytes, sentAtMs, headAtMs }));
  }

  private prune(nowMs: number, hard: boolean): void {
    for (const entry of this.entries) {
      if (entry.headAtMs !== undefined && nowMs - entry.headAtMs > FORGET_AFTER_HEAD_MS) this.entries.delete(entry);
    }
    // Still full: the oldest go (a driver that never ends its exchanges must not grow this).
    if (hard) for (const entry of this.entries) {
      if (this.entries.size < MAX_ENTRIES) break;
      this.entries.delete(entry);
    }
  }
}
