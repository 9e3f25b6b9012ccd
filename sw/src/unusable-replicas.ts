/**
 * Says why a replica is never used (issue 23, trap 3). A mirror served without
 * `Access-Control-Allow-Origin` (`python3 -m http.server`) fails every CORS request with a
 * bare TypeError, and the worker quietly falls back to the origin. This wraps the fetch of
 * replica requests; it changes no answer and no decision. When a request to another origin
 *  - fails, it sends one `no-cors` HEAD to the same URL: an answer there means the server is
 *    up and refused CORS, so the replica lacks `Access-Control-Allow-Origin`;
 *  - comes back opaque, the replica is unusable for that.
 * A redirect is an answer, which the own origin answers again (own-origin-answers.ts).
 * Each replica server is reported once per worker session: a `replica-unusable` event (the
 * dashboard) and a message to the site's pages, whose page script prints a console warning
 * once per browsing session (webpp.ts). A server that is merely down is not reported, and
 * is probed again at most once a minute.
 *
 * A lifecycle plugin (plugins.ts) on every physical request of a bound request.
 */
import { REPLICA_UNUSABLE_MESSAGE, type ReplicaUnusableMessage as UnusableReplicaReport } from './messages.js';
import { pageNotifier } from './kill-switch.js';
import type { WorkerPlugin } from './plugins.js';
import type { StateReporter } from './state-reporter.js';

interface UnusableReplicasOptions {
  selfOrigin: string;
  reporter: Pick<StateReporter, 'event'>;
}

/** A server whose CORS failure did not prove a CORS problem (it was down) is probed again after this. */
const REPROBE_AFTER_MS = 60_000;

function tellAllPages(report: UnusableReplicaReport): void {
  pageNotifier()(report).catch(() => undefined);
}

export class UnusableReplicas {
  private readonly reported = new Set<string>();
  private readonly probedAtMs = new Map<string, number>();

  constructor(private readonly options: UnusableReplicasOptions) {}

  /** fetchDidSucceed / fetchDidFail of a bound request's physical requests: reports the replicas the worker cannot use. */
  plugin(): WorkerPlugin {
    return {
      fetchDidSucceed: ({ request, response }) => this.inspect(request, response),
      fetchDidFail: (request, error) => {
        if (this.mayDiagnose(request, error)) void this.diagnose(request);
      },
    };
  }

  private server(request: Request): string | undefined {
    const origin = new URL(request.url).origin; // a Request's URL is always a valid one
    return origin === this.options.selfOrigin || this.reported.has(origin) ? undefined : origin;
  }

  private inspect(request: Request, response: Response): void {
    const server = this.server(request);
    if (server === undefined) return;
    if (response.type === 'opaque') this.report(server, request.url, 'its answers are opaque');
  }

  private mayDiagnose(request: Request, error: unknown): boolean {
    const server = this.server(request);
    if (server === undefined || request.mode !== 'cors' || request.signal.aborted) return false;
    if (error instanceof DOMException && error.name === 'AbortError') return false;
    const lastMs = this.probedAtMs.get(server);
    if (lastMs !== undefined && Date.now() - lastMs < REPROBE_AFTER_MS) return false;
    this.probedAtMs.set(server, Date.now());
    return true;
  }

  /** The failed CORS request's URL once more in no-cors mode: an answer proves the server is up and refuses CORS. */
  private async diagnose(request: Request): Promise<void> {
    const server = this.server(request);
    if (server === undefined) return;
    try {
      await fetch(new Request(request.url, { method: 'HEAD', mode: 'no-cors', credentials: 'omit', cache: 'no-store', signal: AbortSignal.timeout(10_000) }));
    } catch {
      return; // down, not misconfigured: failover is the right answer, nothing to report
    }
    this.report(server, request.url, 'every CORS request to it fails');
  }

  /** Both of its reasons are a missing CORS header. */
  private report(server: string, url: string, reason: string): void {
    if (this.reported.has(server)) return;
    this.reported.add(server);
    const report = { server, url, reason, missingHeader: 'Access-Control-Allow-Origin' };
    this.options.reporter.event({ type: 'replica-unusable', atMs: Date.now(), ...report });
    tellAllPages({ type: REPLICA_UNUSABLE_MESSAGE, ...report });
  }
}
