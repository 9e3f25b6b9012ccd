/**
 * A server's body throughput (bytes/ms): a ratio of time-decayed sums, Σ w·bytes / Σ w·ms,
 * with w = 2^(−age / halfLife) as in the latency sketch. A ratio of sums weighs long
 * transfers most, which time the link best; small bodies are left out by the caller.
 * Body time is responseStart → responseEnd (Resource Timing), so the first byte is not in it.
 */
export interface ThroughputJSON {
  bytes: number;
  ms: number;
  atMs: number;
}

export class ThroughputEstimate {
  private bytes = 0;
  private ms = 0;
  private atMs = 0;

  get known(): boolean {
    return this.ms > 0 && this.bytes > 0;
  }

  add(bodyBytes: number, bodyMs: number, nowMs: number, halfLifeMs: number): void {
    const decay = this.atMs === 0 ? 0 : 2 ** (-Math.max(0, nowMs - this.atMs) / halfLifeMs);
    // A body in under 1 ms is timed as 1 ms: the clock's resolution, not an infinite rate.
    this.bytes = this.bytes * decay + bodyBytes;
    this.ms = this.ms * decay + Math.max(1, bodyMs);
    this.atMs = Math.max(this.atMs, nowMs);
  }

  /** bytes/ms, or undefined before any sample. */
  bytesPerMs(): number | undefined {
    return this.known ? this.bytes / this.ms : undefined;
  }

  toJSON(): ThroughputJSON {
    return { bytes: this.bytes, ms: this.ms, atMs: this.atMs };
  }

  load(json: ThroughputJSON): void {
    this.bytes = json.bytes;
    this.ms = json.ms;
    this.atMs = json.atMs;
  }
}
