/**
 * A server's own concurrency, as one client sees it (issue 22 §2, bursts): a server (or the
 * process behind it) that serves c requests at once queues the rest, whatever the client's
 * connection count. The client cannot see c, but it sees what c does: its first bytes there
 * grow with the number of its own exchanges waiting there at the same time.
 *
 * A server of c workers with service time s completes this client's backlog at X = c / s
 * exchanges per ms, so by Little's law (L = λW; Kleinrock, "Queueing Systems" vol. 1, 1975,
 * §2.1) k exchanges ahead of a new one drain in k · b, b = 1 / X = s / c. The engine counts,
 * for each exchange, the others to the same server that waited for their heads beside it
 * (`ExchangeSample.contending`: those still waiting when it was sent, and those sent before
 * its head). Over n exchanges waiting together, whatever order they reach the server in, the
 * one served k-th waits k · b: their mean first byte is a + b · (n − 1) / 2. So
 *
 *   ttfb ≈ a + (b / 2) · contending
 *
 * fitted by exponentially weighted least squares (the estimate's half-life, as the latency
 * sketch), with Huber's clipping of residuals (Huber, "Robust estimation of a location
 * parameter", Ann. Math. Statist. 1964) so that a rare stall in a burst is not read as a slow
 * server, and kept only when the slope stands T_MIN standard errors above 0 (the t test of a
 * regression slope): jitter alone must not invent a limit. b is the cost C3 adds for each of
 * the client's own outstanding requests (Suresh et al., NSDI 2015, §4.1, "concurrency
 * compensation"), here measured rather than assumed.
 *
 * The exchanges the server takes at once (exchangesAtOnce) are then N* = a / b, the knee of
 * asymptotic bounds analysis (Lazowska, Zahorjan, Graham and Sevcik, "Quantitative System
 * Performance", 1984, §5.2: N* = D / D_max, D the demand of one exchange, D_max the
 * bottleneck's): with fewer than N* of the client's exchanges ahead, their wait is within one
 * unloaded first byte; beyond it, every further one adds b.
 */

/** Huber's constant, in mean absolute residuals: residuals beyond it are clipped to it. */
const HUBER_K = 3;
/**
 * The weighted variance of the contending exchanges (exchanges²) the samples must have before
 * the slope means anything: samples all taken at one depth say nothing of its effect.
 */
const MIN_SPREAD = 1;
/** Standard errors the slope must stand above 0 by (a t test at about 99.7 %), else it is taken as 0. */
const T_MIN = 3;
/** Decayed weight (samples) the fit needs. */
const MIN_WEIGHT = 4;

export class ServerConcurrency {
  /** Decayed sums over samples (x: contending, y: first byte, clipped): weight, Σx, Σy, Σx², Σxy, Σy². */
  private w = 0;
  private x = 0;
  private y = 0;
  private xx = 0;
  private xy = 0;
  private yy = 0;
  /** Decayed Σ|residual| of the fit (ms): over w, Huber's scale. */
  private absResidual = 0;
  private atMs = 0;

  /** A first byte of `ttfbMs` on an exchange that waited beside `contending` of this client's exchanges to the server, known at `nowMs`. */
  add(contending: number, ttfbMs: number, nowMs: number, halfLifeMs: number): void {
    if (!(contending >= 0) || !Number.isFinite(ttfbMs) || ttfbMs < 0) return;
    const decay = this.atMs === 0 ? 0 : 2 ** (-Math.max(0, nowMs - this.atMs) / halfLifeMs);
    this.atMs = Math.max(this.atMs, nowMs);
    const fit = this.fit();
    // Before a fit, the residual is from the mean (no clipping yet).
    const predictedMs = fit === undefined ? (this.w > 0 ? this.y / this.w : ttfbMs) : fit.interceptMs + fit.slopeMs * contending;
    const residual = ttfbMs - predictedMs;
    const limit = fit === undefined ? Infinity : HUBER_K * Math.max(1, this.absResidual / this.w);
    const clipped = Math.max(-limit, Math.min(limit, residual));
    const y = predictedMs + clipped;
    this.absResidual = this.absResidual * decay + Math.abs(clipped);
    this.w = this.w * decay + 1;
    this.x = this.x * decay + contending;
    this.y = this.y * decay + y;
    this.xx = this.xx * decay + contending * contending;
    this.xy = this.xy * decay + contending * y;
    this.yy = this.yy * decay + y * y;
  }

  /** The fit ttfb ≈ interceptMs + slopeMs · contending (slopeMs = b / 2), once the samples spread over depths. */
  private fit(): { interceptMs: number; slopeMs: number; significant: boolean } | undefined {
    if (this.w < MIN_WEIGHT) return undefined;
    const meanX = this.x / this.w;
    const meanY = this.y / this.w;
    const sxx = this.xx - this.x * meanX;
    if (!(sxx >= MIN_SPREAD * this.w)) return undefined;
    const sxy = this.xy - this.x * meanY;
    const syy = this.yy - this.y * meanY;
    const slopeMs = sxy / sxx;
    // A slope within T_MIN standard errors of 0 is noise (the t test of a regression slope): no queue effect.
    const residualVariance = Math.max(0, syy - slopeMs * sxy) / Math.max(1, this.w - 2);
    const significant = slopeMs > 0 && slopeMs * slopeMs * sxx > T_MIN * T_MIN * residualVariance;
    const fitted = Math.max(0, slopeMs);
    return { interceptMs: Math.max(0, meanY - fitted * meanX), slopeMs: fitted, significant };
  }

  /** b: the first byte's growth per exchange of this client ahead at the server (ms); 0 until measured. */
  perExchangeMs(): number {
    const fit = this.fit();
    return fit?.significant === true ? 2 * fit.slopeMs : 0;
  }

  /**
   * N*: the exchanges of this client the server takes at once, in the sense that those ahead
   * of a new one cost it at most one unloaded first byte (a / b); Infinity until measured or
   * when the first byte does not grow with the queue.
   */
  exchangesAtOnce(): number {
    const fit = this.fit();
    if (fit === undefined || !fit.significant) return Infinity;
    return Math.max(1, Math.floor(fit.interceptMs / (2 * fit.slopeMs)));
  }
}
