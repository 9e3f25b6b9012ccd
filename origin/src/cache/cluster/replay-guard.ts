/**
 * Replay safety for the cache's state-changing peer calls (object pushes, count reports,
 * invalidations). A signature (http/auth.ts) is valid for `maxClockSkewMs` around its
 * timestamp, so a captured call could be replayed within that window: re-counted hits,
 * or an old object pushed back after an invalidation. Each such call carries a one-time
 * nonce in its query string, which the signature covers; the receiver accepts each nonce
 * once while its signature could still verify, and then forgets it.
 *
 * Bounded: at most `maxNonces` are remembered; when full, the oldest are forgotten early,
 * and a call whose nonce is older than the oldest remembered one is refused (so an
 * early-forgotten nonce cannot be replayed either).
 *
 * The nonces seen live in memory only, so a restarted server knows none of those its last
 * run accepted: a nonce stamped before this guard was made is refused too. Without that, a
 * call captured before a restart could be replayed once after it (a fill read before an
 * invalidation would put the old copy back in memory). The cost: for as long as a peer's
 * clock is behind this server's, its first state-changing calls after the restart are
 * refused (it sends the next ones with new nonces).
 */
import { randomBytes } from 'node:crypto';

export const NONCE_PARAM = 'n';

/** A fresh nonce: `<unix ms>.<random>`. */
export function newNonce(nowMs: number = Date.now()): string {
  return `${nowMs}.${randomBytes(12).toString('base64url')}`;
}

export class ReplayGuard {
  /** nonce → its timestamp, in arrival order. */
  private readonly seen = new Map<string, number>();
  /** Nonces with a timestamp at or before this were forgotten early: refused. */
  private floorMs = -Infinity;
  /** Nonces stamped before this were made for an earlier run of this server: refused. */
  private readonly startedAtMs: number;

  constructor(
    private readonly windowMs: number,
    private readonly maxNonces: number,
    private readonly now: () => number = Date.now,
  ) {
    this.startedAtMs = now();
  }

  /** True the first time a well-formed, recent `nonce` is seen; false for a repeat or a bad one. */
  accept(nonce: string | undefined): boolean {
    if (nonce === undefined) return false;
    const match = /^(\d{1,16})\.[A-Za-z0-9_-]{16}$/.exec(nonce);
    if (match === null) return false;
    const stampMs = Number(match[1]);
    const nowMs = this.now();
    if (Math.abs(nowMs - stampMs) > this.windowMs || stampMs <= this.floorMs || stampMs < this.startedAtMs) return false;
    this.expire(nowMs);
    if (this.seen.has(nonce)) return false;
    this.seen.set(nonce, stampMs);
    if (this.seen.size > this.maxNonces) {
      const oldest = this.seen.entries().next().value;
      if (oldest !== undefined) {
        this.seen.delete(oldest[0]);
        this.floorMs = Math.max(this.floorMs, oldest[1]);
      }
    }
    return true;
  }

  private expire(nowMs: number): void {
    for (const [nonce, stampMs] of this.seen) {
      if (nowMs - stampMs <= this.windowMs) break;
      this.seen.delete(nonce);
    }
  }
}
