/**
 * What this server knows of its peers: their latest load records (DCWS's global load
 * table, Baker and Moon 1998, Section 3.3) and whether they are alive (Section 4.5: "if a
 * co-op server does not respond to several pinger requests, then it can be considered
 * down"). Records arrive piggybacked on peer calls (the directory sync, the pinger; see
 * http/peer-state-plugin.ts); this class only keeps them.
 *
 * Liveness: a peer is live until it misses `missedPingsForDown` pings in a row (network
 * error or timeout), and live again as soon as anything is heard from it. Listeners hear
 * each transition once (`onPeerDown`, `onPeerUp`).
 *
 * Replay guard: a record is kept only if it is newer (sender's `atMs`) than the one held
 * for that sender, and within `maxClockSkewMs` of this server's clock. The records held live
 * in memory only, so one made before this server started is refused too: a call captured
 * before a restart, replayed after it, would otherwise bring back a dead peer's old record
 * (alive, fresh, lightly loaded: a co-op for the next placement).
 *
 * Extra fields: other features add named figures to this server's record with
 * `registerField(name, provider)`; peers read them in `record(peer).record.fields[name]`.
 */
import { isFieldName, PEER_STATE_HEADER, encodeLoadRecord, decodeLoadRecord, type LoadField, type LoadRecord } from './load-record.js';

/** This server's own figures, from the load table. */
export type OwnLoad = Pick<LoadRecord, 'requestsPerSecond' | 'bytesPerSecond' | 'utilisation' | 'hot'>;

export interface PeerStateOptions {
  /** This server's public URL. */
  self: string;
  peers: readonly string[];
  ownLoad: () => OwnLoad;
  /** Consecutive missed pings after which a peer is down. */
  missedPingsForDown: number;
  maxClockSkewMs: number;
  clock?: () => number;
}

/** A peer's record as held here, with this server's clock at reception. */
export interface HeldRecord {
  record: LoadRecord;
  receivedAtMs: number;
}

export interface PeerLiveness {
  peer: string;
  live: boolean;
  /** This server's clock when the peer was last heard from; 0: never. */
  lastHeardAtMs: number;
  missedPings: number;
  /** When it was last declared down; 0: never. */
  downSinceMs: number;
  recordsReceived: number;
}

type PeerListener = (peer: string) => void;

export class PeerState {
  private readonly clock: () => number;
  private readonly held = new Map<string, HeldRecord>();
  private readonly liveness = new Map<string, PeerLiveness>();
  private readonly fieldProviders = new Map<string, () => LoadField | undefined>();
  private readonly downListeners = new Set<PeerListener>();
  private readonly upListeners = new Set<PeerListener>();
  private readonly recordListeners = new Set<(peer: string, record: LoadRecord) => void>();
  private lastOwnAtMs = 0;
  /** Records made before this (on their sender's clock) are refused: see the replay guard above. */
  private readonly startedAtMs: number;
  recordsRejected = 0;

  constructor(private readonly options: PeerStateOptions) {
    this.clock = options.clock ?? Date.now;
    this.startedAtMs = this.clock();
    for (const peer of options.peers) {
      this.liveness.set(peer, { peer, live: true, lastHeardAtMs: 0, missedPings: 0, downSinceMs: 0, recordsReceived: 0 });
    }
  }

  get self(): string {
    return this.options.self;
  }

  get peers(): readonly string[] {
    return this.options.peers;
  }

  /**
   * Adds a named figure to every record this server sends (a provider returning undefined
   * leaves it out). Returns a function that removes it.
   * @throws TypeError on a name that is not `[A-Za-z][A-Za-z0-9_.-]{0,63}` or already taken.
   */
  registerField(name: string, provider: () => LoadField | undefined): () => void {
    if (!isFieldName(name)) throw new TypeError(`Bad load-record field name: ${JSON.stringify(name)}`);
    if (this.fieldProviders.has(name)) throw new TypeError(`Load-record field already registered: ${name}`);
    this.fieldProviders.set(name, provider);
    return () => this.fieldProviders.delete(name);
  }

  /** This server's record as of now; `atMs` strictly increases from call to call. */
  ownRecord(): LoadRecord {
    const atMs = Math.max(this.clock(), this.lastOwnAtMs + 1);
    this.lastOwnAtMs = atMs;
    const fields: Record<string, LoadField> = {};
    for (const [name, provider] of this.fieldProviders) {
      const value = provider();
      if (value !== undefined) fields[name] = value;
    }
    return { server: this.options.self, atMs, ...this.options.ownLoad(), fields };
  }

  /** The `webpp-peer-state` header to send with a peer call. */
  outgoingHeaders(): Record<string, string> {
    return { [PEER_STATE_HEADER]: encodeLoadRecord(this.ownRecord()) };
  }

  /**
   * Takes the record in a (signed, verified) header. `from`: the peer the call went to, when
   * this is its answer; the record must then be that peer's. Returns the record if kept.
   * An answer to this server's own call is no replay, so it replaces the held record even
   * when its `atMs` is not newer: a peer whose clock was set back (it ran ahead, within
   * `maxClockSkewMs`) would otherwise have every record refused until its clock caught up
   * with the last one (minutes of stale load figures and pushed values). Nor is it held to
   * this server's start: a peer whose clock is behind ours would be refused for that long.
   */
  receive(header: string | string[] | undefined, from?: string): LoadRecord | undefined {
    if (header === undefined) return undefined;
    const record = decodeLoadRecord(header);
    const nowMs = this.clock();
    const state = record === undefined ? undefined : this.liveness.get(record.server);
    const previous = record === undefined ? undefined : this.held.get(record.server);
    if (
      record === undefined ||
      state === undefined ||
      (from !== undefined && from !== record.server) ||
      Math.abs(record.atMs - nowMs) > this.options.maxClockSkewMs ||
      (from === undefined && (record.atMs < this.startedAtMs || (previous !== undefined && record.atMs <= previous.record.atMs)))
    ) {
      this.recordsRejected += 1;
      return undefined;
    }
    this.held.set(record.server, { record, receivedAtMs: nowMs });
    state.recordsReceived += 1;
    this.heard(record.server);
    for (const listener of this.recordListeners) listener(record.server, record);
    return record;
  }

  /** Something was heard from `peer` (any answer): it is live. */
  heard(peer: string): void {
    const state = this.liveness.get(peer);
    if (state === undefined) return;
    state.lastHeardAtMs = this.clock();
    state.missedPings = 0;
    if (!state.live) {
      state.live = true;
      for (const listener of this.upListeners) listener(peer);
    }
  }

  /** A ping to `peer` got no answer (network error or timeout). */
  missedPing(peer: string): void {
    const state = this.liveness.get(peer);
    if (state === undefined) return;
    state.missedPings += 1;
    if (state.live && state.missedPings >= this.options.missedPingsForDown) {
      state.live = false;
      state.downSinceMs = this.clock();
      for (const listener of this.downListeners) listener(peer);
    }
  }

  /** When `peer` was last heard from (this server's clock; 0: never). */
  lastHeardAtMs(peer: string): number {
    return this.liveness.get(peer)?.lastHeardAtMs ?? 0;
  }

  isLive(peer: string): boolean {
    return this.liveness.get(peer)?.live ?? false;
  }

  /** Peers not declared down, in configuration order. */
  livePeers(): string[] {
    return this.options.peers.filter((peer) => this.isLive(peer));
  }

  /** A peer's latest record, or undefined if none was received. */
  record(peer: string): HeldRecord | undefined {
    return this.held.get(peer);
  }

  /** Every held record, in configuration order. */
  records(): HeldRecord[] {
    return this.options.peers.flatMap((peer) => this.held.get(peer) ?? []);
  }

  peerLiveness(): PeerLiveness[] {
    return this.options.peers.map((peer) => ({ ...(this.liveness.get(peer) as PeerLiveness) }));
  }

  /** Called once each time a peer is declared down. Returns a function that unsubscribes. */
  onPeerDown(listener: PeerListener): () => void {
    this.downListeners.add(listener);
    return () => this.downListeners.delete(listener);
  }

  /** Called once each time a peer that was down is heard from again. */
  onPeerUp(listener: PeerListener): () => void {
    this.upListeners.add(listener);
    return () => this.upListeners.delete(listener);
  }

  /** Called with every record kept. */
  onRecord(listener: (peer: string, record: LoadRecord) => void): () => void {
    this.recordListeners.add(listener);
    return () => this.recordListeners.delete(listener);
  }
}
