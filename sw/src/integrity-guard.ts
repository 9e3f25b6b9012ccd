/**
 * Content integrity for bound requests (docs/service-worker.md, "Integrity"), hooked into the
 * request path as a lifecycle plugin (integrityPlugin) at two points:
 *  - check() follows the attempt stage's run: when the logical URL has a digest from the site's own
 *    origin, a replica's body of at most maxBufferBytes is checked before the page sees it;
 *    on a mismatch the replica is reported and marked failed, and the attempts go on with
 *    the replicas not yet tried, then the own origin itself (the primary copy) as a last
 *    resort. Wrong bytes are never served.
 *  - guard() wraps the body handed to the page when it was too large to hold: the digest is
 *    checked as the body ends, and the body errors instead of ending on a mismatch.
 * Responses of the own origin are not checked: the digests come from it, so its bytes are
 * the truth by definition (and a file changed since the digest was learned still loads).
 */
import type { AttemptRecord, EngineAttempt, RunResult, ServerId } from '@webpp/core';
import { DigestStore } from './digest-store.js';
import type { IntegrityDeps, IntegrityStage } from './integrity-stage.js';
import type { WorkerPlugin } from './plugins.js';
import { DEFAULT_VERIFY_BUFFER_BYTES, checkBody, replicaAnswerVerdict, verifyingResponse, wantsWholeBody, type BodyCheck } from './integrity.js';

interface IntegrityGuardOptions {
  digests: DigestStore;
  selfOrigin: string;
  maxBufferBytes: number;
  /** A replica served bytes that do not match the digest (before or after the page saw them). */
  onMismatch(report: { server: ServerId; logicalUrl: string; expected: string; actual: string; streamed: boolean }): void;
  /** A replica's body broke off while it was being checked. */
  onUnreadable(server: ServerId): void;
  /** A replica's body matched its digest. */
  onVerified?(server: ServerId): void;
}

/** Attempt outcomes after which a server is not asked again for the same request. */
const SPENT = new Set(['served', 'timeout', 'network-error', 'server-error', 'stale']);

class IntegrityGuard {
  private readonly toStream = new WeakMap<Request, { server: ServerId; logicalUrl: string; integrity: string }>();

  constructor(private readonly options: IntegrityGuardOptions) {}

  /** Checks the run's answer (`first`), failing over past replicas whose bytes do not match through `attempt`. */
  async check(request: Request, logicalUrl: string, specs: readonly EngineAttempt[], first: RunResult<Response>, attempt: (plan: readonly EngineAttempt[]) => Promise<RunResult<Response>>): Promise<RunResult<Response>> {
    const integrity = this.options.digests.get(logicalUrl);
    let result = first;
    if (integrity === undefined) return result;
    const earlier: AttemptRecord[] = [];
    const spent = new Set<ServerId>();
    for (;;) {
      if (result.kind !== 'served') return { ...result, attempts: [...earlier, ...result.attempts] };
      const { winner, response, attempts } = result;
      const merged = (served: Response): RunResult<Response> => ({ kind: 'served', winner, response: served, attempts: [...earlier, ...attempts] });
      if (winner.server === this.options.selfOrigin || !wantsWholeBody(request)) return merged(response);
      const verdict = replicaAnswerVerdict(response);
      if (verdict === 'pass') return merged(response);
      const check: BodyCheck =
        verdict === 'check'
          ? await checkBody(response, integrity, this.options.maxBufferBytes)
          : { kind: 'unreadable', error: `integrity: a replica answered ${response.status} (${response.type}) for a URL with a digest` };
      if (verdict === 'refuse') void response.body?.cancel().catch(() => undefined);
      if (check.kind === 'verified') this.options.onVerified?.(winner.server);
      if (check.kind === 'verified' || check.kind === 'skipped') return merged(check.kind === 'verified' ? check.response : response);
      if (check.kind === 'too-large') {
        this.toStream.set(request, { server: winner.server, logicalUrl, integrity });
        return merged(check.response);
      }
      const record = attempts.find((r) => r.server === winner.server && r.outcome === 'served');
      if (record) {
        record.outcome = 'network-error';
        record.error = check.kind === 'mismatch' ? `integrity: body hashes to ${check.actual}, not ${integrity}` : check.error;
      }
      // A redirect is the replica's answer, not its failure, and its target is the own origin's to
      // give (the page's own request, as own-origin-answers.ts sends it): the own origin is next.
      const redirect = response.type === 'opaqueredirect';
      if (check.kind === 'mismatch') {
        this.options.onMismatch({ server: winner.server, logicalUrl, expected: integrity, actual: check.actual, streamed: false });
      } else if (!redirect) {
        this.options.onUnreadable(winner.server);
      }
      for (const r of attempts) if (SPENT.has(r.outcome)) spent.add(r.server);
      earlier.push(...attempts);
      const rest = redirect ? [] : specs.filter((spec) => !spent.has(spec.server));
      if (!spent.has(this.options.selfOrigin) && !rest.some((spec) => spec.server === this.options.selfOrigin) && isOn(logicalUrl, this.options.selfOrigin)) {
        rest.push({ server: this.options.selfOrigin, target: logicalUrl, timeoutMs: winner.timeoutMs, reason: 'integrity-primary-copy', ...(winner.deadlineMs === undefined ? {} : { deadlineMs: winner.deadlineMs }) });
      }
      if (rest.length === 0) return { kind: 'failed', attempts: earlier };
      result = await attempt(rest);
    }
  }

  /** The response for the page: a body too large to check up front is checked as it ends. */
  guard(request: Request, response: Response): Response {
    const pending = this.toStream.get(request);
    if (pending === undefined) return response;
    this.toStream.delete(request);
    const { server, logicalUrl, integrity } = pending;
    return verifyingResponse(
      response,
      integrity,
      (actual) => this.options.onMismatch({ server, logicalUrl, expected: integrity, actual, streamed: true }),
      () => this.options.onVerified?.(server),
    );
  }
}

function isOn(url: string, origin: string): boolean {
  return url.startsWith(origin) && url[origin.length] === '/';
}

/** attemptsDidFinish (wrong bytes fail over) and handlerWillRespond (a large body checked as it ends). */
function integrityPlugin(guard: IntegrityGuard): WorkerPlugin {
  return {
    attemptsDidFinish: (bound, result) => guard.check(bound.request, bound.logicalUrl, bound.plan, result, (plan) => bound.attemptAgain(plan)),
    handlerWillRespond: (bound, _result, response) => guard.guard(bound.request, response),
  };
}

/**
 * The integrity stage of the webpp-sw-integrity.js add-on (and of a Workbox worker): the
 * digests the own origin gave (kept in IndexedDB), and the guard that checks replicas' bytes
 * against them; a replica with wrong bytes is a failed server.
 */
export function createIntegrity(deps: IntegrityDeps): IntegrityStage {
  const { reporter } = deps;
  const digests = new DigestStore({ storage: deps.storage, flushDelayMs: deps.flushDelayMs });
  const guard = new IntegrityGuard({
    digests,
    selfOrigin: deps.selfOrigin,
    maxBufferBytes: deps.maxBufferBytes ?? DEFAULT_VERIFY_BUFFER_BYTES,
    onMismatch: ({ server, logicalUrl, expected, actual, streamed }) => {
      reporter.count('integrityFailures');
      reporter.event({ type: 'integrity-failure', atMs: Date.now(), server, logicalUrl, expected, actual, streamed });
      deps.failed(server);
    },
    onUnreadable: (server) => deps.failed(server),
    onVerified: () => reporter.count('bodiesVerified'),
  });
  return {
    enabled: true,
    plugin: integrityPlugin(guard),
    learn: (learned, waitUntil) => {
      if (digests.record(learned) > 0) waitUntil(digests.changed());
    },
    restore: (stored) => digests.restore(stored),
    flush: () => digests.flushNow(),
  };
}
