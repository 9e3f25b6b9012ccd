/**
 * A token bucket that earns tokens per request rather than per second: each request adds
 * `sharePerRequest`, each extra request (a hedge, a refresh) spends one. So extra requests
 * stay within share × requests whatever the request rate — the "budget" of hedged requests
 * (Dean and Barroso, "The Tail at Scale"). The bucket starts empty.
 *
 * Two refinements keep the budget work-conserving without raising it:
 * - tokens that would overflow a full bucket go to `overflowTo` (unused hedge tokens pay
 *   for refreshes), so the sum of both budgets is what bounds the extra requests;
 * - `borrow` may take the balance down to −capacity, for a burst of refreshes right after a
 *   change; the debt is paid back from later earnings before anything else is spent. Over
 *   any run, spent ≤ share × requests + capacity.
 */
export class TokenBucket {
  private tokens: number;
  overflowTo: TokenBucket | undefined;

  constructor(
    private readonly sharePerRequest: number,
    private readonly capacityTokens: number,
    initialTokens = 0,
  ) {
    this.tokens = Math.min(capacityTokens, initialTokens);
  }

  /** One request was made. */
  earn(): void {
    this.deposit(this.sharePerRequest);
  }

  private deposit(amount: number): void {
    const room = this.capacityTokens - this.tokens;
    this.tokens += Math.min(room, amount);
    if (amount > room && this.overflowTo !== undefined) this.overflowTo.deposit(amount - Math.max(0, room));
  }

  /** True when a whole token is there (without spending it). */
  canSpend(): boolean {
    return this.tokens >= 1 - 1e-9;
  }

  /** Spends one token if there is one. */
  trySpend(): boolean {
    if (!this.canSpend()) return false;
    this.tokens -= 1;
    return true;
  }

  /** Charges one token for an extra request the bucket did not grant (a failover, a resume), down to −capacity at most. */
  charge(): void {
    this.tokens = Math.max(-this.capacityTokens, this.tokens - 1);
  }

  /** Spends one token, going into debt down to −capacity at most; false when that is reached. */
  borrow(): boolean {
    if (this.tokens - 1 < -this.capacityTokens - 1e-9) return false;
    this.tokens -= 1;
    return true;
  }

  get balance(): number {
    return this.tokens;
  }
}
