/**
 * Propagation of the replication directory between the servers of one administrative
 * domain (paper Sections 2 and 5.2: servers "propagate the update to other servers" and
 * "guarantee eventual consistency of their replication directories"). The consistency
 * protocol is Yjs's, not ours: every change is a Yjs update, and the y-protocols sync
 * messages travel over signed HTTP POSTs to `/.well-known/webpp/sync`.
 *
 * - Immediate push: every local update is sent at once to every peer (messageYjsUpdate).
 * - Anti-entropy: every `intervalMs`, each peer is synchronised with the y-protocols
 *   client–server handshake: we send SyncStep1 (our state vector); the peer answers with
 *   SyncStep2 (what we miss) followed by its own SyncStep1; we answer that with SyncStep2
 *   (what it misses). This repairs pushes lost to partitions, crashes or restarts.
 * Yjs updates are idempotent and commutative, so duplicates and reordering are harmless.
 * A peer that is still starting answers 503 with Retry-After (http/start-gate.ts): the
 * round with that peer is retried after that delay (at most one period) instead of
 * waiting a whole period, so that a restarted server catches up within seconds.
 */
import { WELL_KNOWN_PREFIX } from '@webpp/core';
import * as Y from 'yjs';
import * as syncProtocol from 'y-protocols/sync';
import * as encoding from 'lib0/encoding';
import * as decoding from 'lib0/decoding';
import { clusterRequest, type ClusterResponse } from './cluster-client.js';
import { WEBPP_ERR_BAD_SYNC_MESSAGE } from '../errors.js';

export const SYNC_PATH = `${WELL_KNOWN_PREFIX}sync`;

/** Transaction origin of updates received from peers (they are not pushed again). */
const REMOTE_ORIGIN = Symbol('webpp-remote-peer');

interface PeerSyncLogger {
  debug(object: object, message: string): void;
  warn(object: object, message: string): void;
}

export interface PeerSyncOptions {
  doc: Y.Doc;
  peers: string[];
  secret: string;
  intervalMs: number;
  timeoutMs: number;
  log: PeerSyncLogger;
  /** Piggybacks on every sync call (the peer load records, sync/peer-state.ts). */
  piggyback?: PeerPiggyback;
}

/** Headers added to every sync call, and what to do with a peer's successful answer. */
export interface PeerPiggyback {
  outgoingHeaders(): Record<string, string>;
  answered(peer: string, headers: ClusterResponse['headers']): void;
}

/** A peer answered something other than 200; `retryAfterMs` is set when it asked to be retried later (503). */
class PeerAnswerError extends Error {
  constructor(
    readonly status: number,
    detail: string,
    readonly retryAfterMs: number | undefined,
  ) {
    super(`peer answered ${status}: ${detail}`);
  }
}

/** Retry-After in delta-seconds (RFC 9110 §10.2.3); HTTP dates are not used between peers. */
function retryAfterMsOf(header: string | string[] | undefined): number | undefined {
  const value = Array.isArray(header) ? header[0] : header;
  if (value === undefined || !/^\d{1,6}$/.test(value.trim())) return undefined;
  return Number(value.trim()) * 1000;
}

export interface PeerStatus {
  peer: string;
  lastSuccessAtMs: number;
  lastFailureAtMs: number;
  lastError: string | undefined;
  pushesSent: number;
  pushesFailed: number;
  syncRounds: number;
}

export class PeerSync {
  private readonly status = new Map<string, PeerStatus>();
  private timer: NodeJS.Timeout | undefined;
  private stopped = true;
  private readonly inFlight = new Set<Promise<unknown>>();
  /** Updates waiting to be pushed, per peer; one push per peer is in flight at a time. */
  private readonly pending = new Map<string, Uint8Array[]>();
  private readonly pushing = new Set<string>();
  /** Early anti-entropy retries with peers that asked for one (503 + Retry-After). */
  private readonly earlyRetries = new Map<string, NodeJS.Timeout>();
  private readonly onUpdate = (update: Uint8Array, origin: unknown): void => {
    if (origin === REMOTE_ORIGIN || this.stopped) return;
    for (const peer of this.options.peers) {
      const queue = this.pending.get(peer) ?? [];
      queue.push(update);
      this.pending.set(peer, queue);
      if (!this.pushing.has(peer)) this.track(this.drain(peer));
    }
  };

  constructor(private readonly options: PeerSyncOptions) {
    for (const peer of options.peers) {
      this.status.set(peer, {
        peer,
        lastSuccessAtMs: 0,
        lastFailureAtMs: 0,
        lastError: undefined,
        pushesSent: 0,
        pushesFailed: 0,
        syncRounds: 0,
      });
    }
  }

  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    this.options.doc.on('update', this.onUpdate);
    if (this.options.peers.length === 0) return;
    const tick = (): void => {
      this.timer = setTimeout(() => {
        void this.syncAll().finally(() => {
          if (!this.stopped) tick();
        });
      }, this.options.intervalMs);
      this.timer.unref();
    };
    // First round right away, so a restarted server catches up without waiting a period.
    this.track(this.syncAll());
    tick();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.options.doc.off('update', this.onUpdate);
    if (this.timer !== undefined) clearTimeout(this.timer);
    for (const timer of this.earlyRetries.values()) clearTimeout(timer);
    this.earlyRetries.clear();
    await Promise.allSettled([...this.inFlight]);
  }

  peerStatus(): PeerStatus[] {
    return [...this.status.values()].map((status) => ({ ...status }));
  }

  /** One anti-entropy round with every peer, in parallel. Never rejects. */
  async syncAll(): Promise<void> {
    await Promise.allSettled(this.options.peers.map((peer) => this.syncWith(peer)));
  }

  /** Anti-entropy with one peer (two HTTP round trips at most). Resolves true on success. */
  async syncWith(peer: string): Promise<boolean> {
    const { doc } = this.options;
    try {
      const hello = encoding.createEncoder();
      syncProtocol.writeSyncStep1(hello, doc);
      const reply = await this.post(peer, encoding.toUint8Array(hello));
      const answer = handleSyncMessages(doc, reply, false);
      if (answer.byteLength > 0) await this.post(peer, answer);
      this.succeeded(peer, (status) => (status.syncRounds += 1));
      return true;
    } catch (error) {
      this.failed(peer, error);
      if (error instanceof PeerAnswerError && error.retryAfterMs !== undefined) this.retryEarly(peer, error.retryAfterMs);
      return false;
    }
  }

  /** One more round with `peer` after `delayMs` (clamped to [1 s, one period]); at most one pending per peer. */
  private retryEarly(peer: string, delayMs: number): void {
    if (this.stopped || this.earlyRetries.has(peer)) return;
    const clampedMs = Math.min(Math.max(delayMs, 1000), this.options.intervalMs);
    const timer = setTimeout(() => {
      this.earlyRetries.delete(peer);
      if (!this.stopped) this.track(this.syncWith(peer));
    }, clampedMs);
    timer.unref();
    this.earlyRetries.set(peer, timer);
  }

  /** Pushes queued updates to one peer, merging whatever piled up while a push was in flight. */
  private async drain(peer: string): Promise<void> {
    this.pushing.add(peer);
    try {
      for (;;) {
        const queue = this.pending.get(peer);
        if (queue === undefined || queue.length === 0 || this.stopped) return;
        this.pending.set(peer, []);
        const message = encoding.createEncoder();
        syncProtocol.writeUpdate(message, queue.length === 1 ? (queue[0] as Uint8Array) : Y.mergeUpdates(queue));
        try {
          await this.post(peer, encoding.toUint8Array(message));
          this.succeeded(peer, (status) => (status.pushesSent += 1));
        } catch (error) {
          // Dropped on purpose: the next anti-entropy round transfers whatever is missing.
          this.failed(peer, error, (status) => (status.pushesFailed += 1));
        }
      }
    } finally {
      this.pushing.delete(peer);
    }
  }

  private async post(peer: string, body: Uint8Array): Promise<Uint8Array> {
    const response = await clusterRequest(this.options.secret, new URL(SYNC_PATH, peer).href, {
      method: 'POST',
      body,
      headers: this.options.piggyback?.outgoingHeaders(),
      timeoutMs: this.options.timeoutMs,
    });
    if (response.status === 200) this.options.piggyback?.answered(peer, response.headers);
    if (response.status !== 200) {
      const retryAfterMs = response.status === 503 ? retryAfterMsOf(response.headers['retry-after']) : undefined;
      throw new PeerAnswerError(response.status, new TextDecoder().decode(response.body).slice(0, 200), retryAfterMs);
    }
    return response.body;
  }

  private succeeded(peer: string, count: (status: PeerStatus) => void): void {
    const status = this.status.get(peer);
    if (status === undefined) return;
    status.lastSuccessAtMs = Date.now();
    status.lastError = undefined;
    count(status);
  }

  private failed(peer: string, error: unknown, count?: (status: PeerStatus) => void): void {
    const status = this.status.get(peer);
    if (status !== undefined) {
      status.lastFailureAtMs = Date.now();
      status.lastError = (error as Error).message;
      count?.(status);
    }
    this.options.log.debug({ peer, err: (error as Error).message }, 'webpp directory sync with peer failed; anti-entropy will retry');
  }

  private track(promise: Promise<unknown>): void {
    this.inFlight.add(promise);
    void promise.finally(() => this.inFlight.delete(promise));
  }
}

/**
 * Applies a sequence of y-protocols sync messages to `doc` and returns the reply messages.
 * As the answering side (`answerWithStep1`), a request that opened with SyncStep1 also gets
 * our own SyncStep1 appended, completing the client–server handshake of y-protocols.
 * @throws WEBPP_ERR_BAD_SYNC_MESSAGE when the input does not decode.
 */
export function handleSyncMessages(doc: Y.Doc, input: Uint8Array, answerWithStep1: boolean): Uint8Array {
  const decoder = decoding.createDecoder(input);
  const reply = encoding.createEncoder();
  let sawStep1 = false;
  let applyError: Error | undefined;
  try {
    // All or nothing: a request that is refused must not have applied its first messages.
    assertDecodable(input);
    while (decoding.hasContent(decoder)) {
      const type = syncProtocol.readSyncMessage(decoder, reply, doc, REMOTE_ORIGIN, (error) => {
        applyError = error;
      });
      if (type === syncProtocol.messageYjsSyncStep1) sawStep1 = true;
    }
  } catch (error) {
    throw new WEBPP_ERR_BAD_SYNC_MESSAGE((error as Error).message);
  }
  if (applyError !== undefined) throw new WEBPP_ERR_BAD_SYNC_MESSAGE(applyError.message);
  if (answerWithStep1 && sawStep1) syncProtocol.writeSyncStep1(reply, doc);
  return encoding.toUint8Array(reply);
}

/**
 * Reads every message of a sync request without applying any (found by fuzzing: a valid
 * update followed by garbage used to be applied, then answered 400).
 * @throws on an unknown message type, a truncated message or an undecodable payload.
 */
function assertDecodable(input: Uint8Array): void {
  const decoder = decoding.createDecoder(input);
  while (decoding.hasContent(decoder)) {
    const type = decoding.readVarUint(decoder);
    const payload = decoding.readVarUint8Array(decoder);
    if (type === syncProtocol.messageYjsSyncStep1) Y.decodeStateVector(payload);
    else if (type === syncProtocol.messageYjsSyncStep2 || type === syncProtocol.messageYjsUpdate) Y.decodeUpdate(payload);
    else throw new Error('Unknown message type');
  }
}
