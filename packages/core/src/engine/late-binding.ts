/**
 * Late binding (issue 22 §2, bursts): a page's burst is bound request by request as the
 * connections free, not all at once before any answer came.
 *
 * A request whose first choice already has as many of this client's exchanges in flight as
 * that server takes at once (a browser's six connections per host over HTTP/1.1) would only
 * wait in the browser's per-host queue, bound to a server chosen before the burst's first
 * answers said how fast anything is. The engine holds it instead, and plans it again each
 * time one of this client's exchanges ends (a connection frees): it is sent when the server
 * the policy then prefers can take it, and waits on otherwise. So the servers that answer
 * sooner take more of the burst, and what the first answers teach is used by the rest.
 *
 * - Sparrow (Ousterhout, Wendell, Zaharia and Stoica, SOSP 2013, §4.3 "late binding"):
 *   workers ask for a task when they are free, instead of tasks queued at workers chosen up
 *   front on stale load information.
 * - Join-idle-queue (Lu, Xie, Kliot, Geller, Larus and Greenberg, Performance Evaluation
 *   2011): idle servers pull work, so faster servers serve more.
 *
 * A held request is planned again with the held requests ahead of it counted where they
 * would go (their last first choice), so that the hundredth request of a burst sees the
 * queue of the ninety-nine before it, as an early binding would (list scheduling), but with
 * what is known at the moment it can be sent. The policy is told that such a plan is the
 * same request again (PlanInput.rebind): it earns no budget twice.
 *
 * Fail-open: a request waits here no longer than its first attempt's timeout (the queue wait
 * the policy expected included) without any of this client's exchanges ending (a driver that
 * stopped telling the engine, or servers that stopped answering); then it is sent to the
 * policy's choice and the browser queues it, as without late binding. While exchanges keep
 * ending, the held requests move, and it holds on.
 */
import type { ServerId } from '../types.js';
import type { Cancel, EngineAttempt } from './engine-io.js';
import type { InFlightExchange } from './policy-types.js';

/** One request held back until a server it wants can take it. */
interface Held {
  /** Plans the request again with what is known now (the held ahead of it as `ahead`). */
  rebind(ahead: readonly InFlightExchange[]): EngineAttempt[];
  /** Sends the request on `plan`. */
  start(plan: readonly EngineAttempt[]): void;
  /** The size it expects (bytes; 0: unknown), for the queue the held behind it see. */
  sizeBytes: number;
  /** Its last plan's first server: where the held behind it count it. */
  wants: ServerId | undefined;
  /** The fail-open timer. */
  giveUp: Cancel | undefined;
}

interface HoldQueueOptions {
  now(): number;
  setTimer(delayMs: number, run: () => void): Cancel;
  /** `plan` as it may be sent now (its first attempt maybe another of its servers), or undefined when it must wait. */
  sendable(plan: readonly EngineAttempt[]): readonly EngineAttempt[] | undefined;
}

/**
 * Held requests planned again per pump at most, beyond those sent: a pump after every ended
 * exchange must stay cheap when a burst of a hundred waits for one preferred server.
 */
const MAX_REPLANS_PER_PUMP = 24;

export class HoldQueue {
  private readonly held: Held[] = [];
  private pumpTimer: Cancel | undefined;
  /** When one of this client's exchanges last ended: a held request gives up waiting only when none has for its whole hold. */
  private lastWakeAtMs = -Infinity;

  constructor(private readonly options: HoldQueueOptions) {}

  /** Requests held now. */
  get size(): number {
    return this.held.length;
  }

  /**
   * The held requests as exchanges queued where each would go now: what a plan must count
   * as ahead of a new request (PlanInput.inFlight).
   */
  queued(): InFlightExchange[] {
    return this.aheadOf(undefined);
  }

  /**
   * Holds a request whose `plan` must wait; `start` sends it later on a fresh plan.
   * `maxHoldMs`: the fail-open bound. Returns the cancel: it drops the request if it is still
   * held (the page gave up).
   */
  hold(plan: readonly EngineAttempt[], sizeBytes: number, rebind: Held['rebind'], start: Held['start'], maxHoldMs: number): Cancel {
    const held: Held = { rebind, start, sizeBytes, wants: plan[0]?.server, giveUp: undefined };
    this.held.push(held);
    const giveUp = (): void => {
      held.giveUp = undefined;
      // Exchanges are still ending (the held requests move): not stuck, hold on.
      if (this.options.now() - this.lastWakeAtMs < maxHoldMs && this.held.includes(held)) {
        held.giveUp = this.options.setTimer(maxHoldMs, giveUp);
        return;
      }
      const ahead = this.aheadOf(held);
      if (this.remove(held)) held.start(held.rebind(ahead));
    };
    held.giveUp = this.options.setTimer(maxHoldMs, giveUp);
    return () => {
      if (this.remove(held)) held.giveUp?.();
    };
  }

  /** One of this client's exchanges ended: look at the held requests once the current event is over. */
  wake(): void {
    this.lastWakeAtMs = this.options.now();
    if (this.pumpTimer !== undefined || this.held.length === 0) return;
    this.pumpTimer = this.options.setTimer(0, () => {
      this.pumpTimer = undefined;
      this.pump();
    });
  }

  /** Stops every timer (the engine stops); held requests stay held. */
  stop(): void {
    this.pumpTimer?.();
    this.pumpTimer = undefined;
  }

  /** In arrival order: each held request planned again; sent when its first choice can take it now. */
  private pump(): void {
    let replans = 0;
    for (const held of [...this.held]) {
      if (replans >= MAX_REPLANS_PER_PUMP) break;
      const plan = held.rebind(this.aheadOf(held));
      held.wants = plan[0]?.server;
      const ready = this.options.sendable(plan);
      if (ready === undefined) {
        replans++;
        continue;
      }
      this.remove(held);
      held.giveUp?.();
      held.start(ready);
    }
  }

  /** The held requests before `held` (all of them for undefined), queued where each would go. */
  private aheadOf(held: Held | undefined): InFlightExchange[] {
    const nowMs = this.options.now();
    const ahead: InFlightExchange[] = [];
    for (const other of this.held) {
      if (other === held) break;
      if (other.wants !== undefined) ahead.push({ server: other.wants, sizeBytes: other.sizeBytes, sentAtMs: nowMs });
    }
    return ahead;
  }

  private remove(held: Held): boolean {
    const index = this.held.indexOf(held);
    if (index < 0) return false;
    this.held.splice(index, 1);
    return true;
  }
}
