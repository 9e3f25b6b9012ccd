/**
 * Keeps the site's own origin in reach of the worker (docs/protocol.md, "Trust rule"). Only
 * the own origin may switch the worker off, and only its digests count; yet once pages are
 * bound to replicas the worker may not hear from it for a long time. So, on a navigation
 * served by a replica, when the own origin has not answered for `intervalMs`, the worker
 * sends it one background HEAD for the page's URL and reads its webpp headers
 * (`webpp-control`, bindings, digests). At most one such check runs at a time; one due while
 * another runs is run once that one ends (coalesced: at most one waits, for the latest page),
 * since the answer on its way may predate a switch-off that the later page must hear of.
 */
import type { WorkerPlugin } from './plugins.js';

export interface ControlCheckOptions {
  selfOrigin: string;
  intervalMs: number;
  now: () => number;
  /** Sends the HEAD (with the signal that bounds it). */
  head: (url: string, signal: AbortSignal) => Promise<Response>;
  timeoutMs: () => number;
  /** The own origin's answer, to learn from; resolves when what it started (a switch-off) is done. */
  answered: (response: Response, url: string) => Promise<unknown>;
}

export class ControlCheck {
  private heardAtMs = Number.NEGATIVE_INFINITY;
  /** The checks on their way: the running one, then the one asked for meanwhile, if any. */
  private running: Promise<void> | undefined;
  /** The URL to check next: the latest page's that asked (coalesced: one at most). */
  private pendingUrl: string | undefined;

  constructor(private readonly options: ControlCheckOptions) {}

  /** The own origin just answered (any request): no check is due for intervalMs. */
  heard(): void {
    this.heardAtMs = this.options.now();
  }

  /** After a navigation to `logicalUrl` that a replica served; resolves when its check is done. Never rejects. */
  async afterReplicaNavigation(logicalUrl: string): Promise<void> {
    const { selfOrigin, intervalMs, now } = this.options;
    if (now() - this.heardAtMs < intervalMs) return;
    this.pendingUrl = logicalUrl.startsWith(`${selfOrigin}/`) ? logicalUrl : `${selfOrigin}/`;
    return (this.running ??= this.checkPending());
  }

  /** Checks the pending URL until none is left: the one asked for during a check is not held to the interval (the answer just heard may predate it). */
  private async checkPending(): Promise<void> {
    for (let url = this.pendingUrl; url !== undefined; url = this.pendingUrl) {
      this.pendingUrl = undefined;
      await this.check(url);
    }
    this.running = undefined;
  }

  private async check(url: string): Promise<void> {
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(), this.options.timeoutMs());
    try {
      const response = await this.options.head(url, controller.signal);
      this.heard();
      await this.options.answered(response, url);
    } catch {
      // The own origin is down or slow: the replicas keep serving; try again next navigation.
    } finally {
      clearTimeout(timer);
    }
  }
}

/** handlerWillRespond: after a navigation a replica served, hear from the own origin (its control headers) now and then. */
export function controlCheckPlugin(check: ControlCheck, selfOrigin: string): WorkerPlugin {
  return {
    handlerWillRespond(bound, result, response) {
      if (bound.request.mode === 'navigate' && result.winner.server !== selfOrigin) bound.io.waitUntil(check.afterReplicaNavigation(bound.logicalUrl));
      return response;
    },
  };
}
