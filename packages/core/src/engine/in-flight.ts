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
 *
 * The same ledger tells the engine when an exchange could have left the browser
 * (whenSendable): over HTTP/1.1 a browser sends at most six requests at once to a host and
 * queues the rest, so an attempt's timeout starts only once fewer than six of this client's
 * earlier exchanges to that server are still in flight (run-attempts.ts).
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
  /**
   * This client's other exchanges to the same server that waited for their heads while this
   * one did: those still without a head when it was sent, and those sent before its head. The
   * server's own concurrency shows in how the first byte grows with it (policies/webpp/concurrency.ts),
   * whatever order the exchanges reached the server in.
   */
  contending(): number;
}

type Entry = InFlightEntry & { headAtMs?: number; sendable?: { connections: number; run: () => void }; contenders: number };

export class InFlightLedger {
  private readonly entries = new Set<Entry>();
  /** Per server, its entries in the order they were sent: an entry's index is the exchanges ahead of it. */
  private readonly byServer = new Map<ServerId, Entry[]>();
  /** Told when an exchange leaves (late-binding.ts: a connection freed). */
  private readonly endListeners = new Set<(server: ServerId) => void>();

  /** `listener` is called with the server each time one of its exchanges leaves the ledger. Returns unsubscribe. */
  onEnded(listener: (server: ServerId) => void): () => void {
    this.endListeners.add(listener);
    return () => this.endListeners.delete(listener);
  }

  /** An exchange to `server` of `sizeBytes` (0: unknown) was sent at `nowMs`. */
  start(server: ServerId, sizeBytes: number, nowMs: number): InFlightEntry {
    if (this.entries.size >= MAX_ENTRIES) this.prune(nowMs, true);
    const line = this.byServer.get(server);
    let waiting = 0;
    // Every exchange still waiting for its head there waits beside this one (contending).
    if (line !== undefined) {
      for (const other of line) {
        if (other.headAtMs !== undefined) continue;
        waiting++;
        other.contenders++;
      }
    }
    const entry: Entry = {
      server,
      sizeBytes,
      sentAtMs: nowMs,
      contenders: waiting,
      end: () => this.remove(entry),
      head: (atMs: number) => {
        entry.headAtMs ??= atMs;
      },
      contending: () => entry.contenders,
    };
    this.entries.add(entry);
    if (line === undefined) this.byServer.set(server, [entry]);
    else line.push(entry);
    return entry;
  }

  /**
   * Whether `server` sent one of this client's exchanges still in the ledger a head after
   * `sinceMs` (alive then, whatever it does with another exchange). Those that left with their
   * bodies complete were samples, which the policy has seen.
   */
  answeredSince(server: ServerId, sinceMs: number): boolean {
    return !!this.byServer.get(server)?.some((entry) => (entry.headAtMs ?? 0) > sinceMs);
  }

  /** Exchanges in flight now, to every server. */
  get size(): number {
    return this.entries.size;
  }

  /** Exchanges to `server` in flight now (all servers without one). */
  count(server: ServerId): number {
    return this.byServer.get(server)?.length ?? 0;
  }

  /**
   * The client's own queue (issue 22 §2): `run` once `entry` could have left the browser,
   * i.e. fewer than `connections` exchanges to its server sent before it are still in flight
   * (a browser sends at most that many at once to a host: 6 over HTTP/1.1). Returns
   * undefined when that is so now (`run` is not called), else a cancel.
   */
  whenSendable(entry: InFlightEntry, connections: number, run: () => void): (() => void) | undefined {
    const line = this.byServer.get(entry.server);
    const waiting = entry as Entry;
    const ahead = line?.indexOf(waiting) ?? -1;
    if (ahead < connections) return undefined;
    waiting.sendable = { connections, run };
    return () => {
      if (waiting.sendable?.run === run) delete waiting.sendable;
    };
  }

  /** A plain snapshot for a plan: what is in flight now. */
  snapshot(nowMs: number): InFlightExchange[] {
    this.prune(nowMs, false);
    return [...this.entries].map(({ server, sizeBytes, sentAtMs, headAtMs }) => (headAtMs === undefined ? { server, sizeBytes, sentAtMs } : { server, sizeBytes, sentAtMs, headAtMs }));
  }

  private remove(entry: Entry): void {
    if (!this.entries.delete(entry)) return;
    delete entry.sendable;
    const line = this.byServer.get(entry.server);
    if (line === undefined) return;
    line.splice(line.indexOf(entry), 1);
    if (line.length === 0) this.byServer.delete(entry.server);
    for (const listener of this.endListeners) listener(entry.server);
    // The exchanges behind it moved up: those now among the first `connections` could leave.
    for (let index = 0; index < line.length; index++) {
      const waiting = line[index]!;
      const sendable = waiting.sendable;
      if (sendable === undefined) continue;
      if (index >= sendable.connections) break;
      delete waiting.sendable;
      sendable.run();
    }
  }

  private prune(nowMs: number, hard: boolean): void {
    for (const entry of this.entries) {
      if (entry.headAtMs !== undefined && nowMs - entry.headAtMs > FORGET_AFTER_HEAD_MS) this.remove(entry);
    }
    // Still full: the oldest go (a driver that never ends its exchanges must not grow this).
    if (hard) for (const entry of this.entries) {
      if (this.entries.size < MAX_ENTRIES) break;
      this.remove(entry);
    }
  }
}
