/**
 * The browser's connections per host: HTTP/1.1 clients open at most six connections to one
 * host and queue further requests until one frees (RFC 9112 leaves the number open; six is
 * what Chromium, Firefox and Safari use: Chromium's kMaxSocketsPerGroup in
 * net/socket/client_socket_pool_manager.cc). Under HTTP/2 every request is a stream of one
 * connection and nothing queues here (then the simulator uses no pool at all).
 *
 * One pool per simulated browser: every client, probe and hedge of the run shares it, in
 * first-come-first-served order per host.
 */
import type { EventQueue } from './event-queue.js';

/** Chromium's, Firefox's and Safari's limit of HTTP/1.1 connections per host. */
export const HTTP1_CONNECTIONS_PER_HOST = 6;

interface Waiter {
  start: () => void;
  state: 'waiting' | 'running' | 'released';
}

export class ConnectionPool {
  private readonly inUse = new Map<string, number>();
  private readonly waiting = new Map<string, Waiter[]>();
  private readonly peak = new Map<string, number>();

  constructor(
    private readonly queue: EventQueue,
    readonly connectionsPerHost: number,
  ) {
    if (!(Number.isInteger(connectionsPerHost) && connectionsPerHost >= 1)) throw new RangeError('connectionsPerHost must be an integer >= 1');
  }

  /**
   * Runs `start` once a connection to `host` is free (at once when one is). Returns the
   * release: it frees the connection, or withdraws the request if it is still waiting.
   * Calling it again does nothing.
   */
  acquire(host: string, start: () => void): () => void {
    const waiter: Waiter = { start, state: 'waiting' };
    const line = this.waiting.get(host) ?? [];
    this.waiting.set(host, line);
    line.push(waiter);
    this.pump(host);
    return () => {
      if (waiter.state === 'released') return;
      const wasRunning = waiter.state === 'running';
      waiter.state = 'released';
      if (!wasRunning) {
        line.splice(line.indexOf(waiter), 1);
        return;
      }
      this.inUse.set(host, (this.inUse.get(host) ?? 1) - 1);
      // The next request starts on the freed connection after the current event, not inside it.
      this.queue.at(this.queue.now(), () => this.pump(host));
    };
  }

  /** The most connections to `host` in use at once so far. */
  peakInUse(host: string): number {
    return this.peak.get(host) ?? 0;
  }

  /** Requests waiting for a connection to `host` now. */
  waitingFor(host: string): number {
    return this.waiting.get(host)?.length ?? 0;
  }

  private pump(host: string): void {
    const line = this.waiting.get(host);
    if (!line) return;
    while (line.length > 0 && (this.inUse.get(host) ?? 0) < this.connectionsPerHost) {
      const waiter = line.shift()!;
      waiter.state = 'running';
      const used = (this.inUse.get(host) ?? 0) + 1;
      this.inUse.set(host, used);
      this.peak.set(host, Math.max(this.peak.get(host) ?? 0, used));
      waiter.start();
    }
  }
}
