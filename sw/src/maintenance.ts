/**
 * The asynchronous requests of the extended Refresh algorithm (paper Section 4.1, Figure 4),
 * sent after a request and never delaying it (they run inside `event.waitUntil`):
 *  - refresh: a HEAD to the available server whose entry is oldest beyond TTL, so that
 *    selection does not starve on stale estimates;
 *  - probe: a HEAD to each failed server whose time has come, "every F seconds until a
 *    response is received", F doubling per probe and reset by a response.
 * At most one request per server is in flight at a time.
 */
import type { ServerId } from '@webpp/core';
import type { MaintenancePlan } from './policy.js';

export interface MaintenanceIO {
  /** A URL on the server that the HEAD can ask for (a resource it is known to hold). */
  probeUrl(server: ServerId): string;
  buildRequest(url: string, signal: AbortSignal): Request;
  fetch(request: Request): Promise<Response>;
  now(): number;
  timeoutMs(server: ServerId): number;
  /** Before a probe is sent: F doubles (core's recordProbeSent). */
  probeSent(server: ServerId): void;
  /**
   * A refresh or probe got an answer below 500: the server is up, and the answer is a
   * latency sample (`sentAtMs`: the clock just before fetch(), to find its timing entry).
   */
  answered(server: ServerId, kind: 'refresh' | 'probe', url: string, ttfbMs: number, status: number, sentAtMs: number): void;
  /** A refresh or probe got no usable answer. */
  unanswered(server: ServerId, kind: 'refresh' | 'probe', url: string, status?: number): void;
}

export class Maintenance {
  private readonly inFlight = new Set<ServerId>();

  constructor(private readonly io: MaintenanceIO) {}

  /** Sends what the plan asks for; resolves when every request has finished. Never rejects. */
  run(plan: MaintenancePlan): Promise<void> {
    const sends: Promise<void>[] = [];
    for (const server of plan.probe) {
      if (this.inFlight.has(server)) continue;
      this.io.probeSent(server);
      sends.push(this.send(server, 'probe'));
    }
    for (const server of plan.refresh) {
      if (this.inFlight.has(server)) continue;
      sends.push(this.send(server, 'refresh'));
    }
    return sends.length === 0 ? Promise.resolve() : Promise.all(sends).then(() => undefined);
  }

  get pending(): number {
    return this.inFlight.size;
  }

  private async send(server: ServerId, kind: 'refresh' | 'probe'): Promise<void> {
    this.inFlight.add(server);
    const url = this.io.probeUrl(server);
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(), this.io.timeoutMs(server));
    try {
      const request = this.io.buildRequest(url, controller.signal);
      const sentAtMs = this.io.now();
      const response = await this.io.fetch(request);
      const ttfbMs = this.io.now() - sentAtMs;
      clearTimeout(timer);
      response.body?.cancel().catch(() => undefined);
      if (response.status >= 500) this.io.unanswered(server, kind, url, response.status);
      else this.io.answered(server, kind, url, ttfbMs, response.status, sentAtMs);
    } catch {
      this.io.unanswered(server, kind, url);
    } finally {
      clearTimeout(timer);
      this.inFlight.delete(server);
    }
  }
}
