/**
 * What `webpp-origin check` finds wrong with one replica's answer, judged as the browser's
 * worker would receive it (sw/src/physical-request.ts: another origin is fetched in CORS
 * mode without credentials; the page's own origin in same-origin mode). Pure: the answer
 * comes in, findings go out.
 *
 * `unusable` findings are those after which the worker never uses the replica (the fetch
 * fails, or the answer is refused); `warning` findings leave it usable but worse.
 */

type Severity = 'unusable' | 'warning';

export interface Finding {
  severity: Severity;
  /** One sentence: what is missing or wrong, and what it does to the worker. */
  message: string;
}

interface ReplicaAnswer {
  /** The page's origin: the worker's own. */
  pageOrigin: string;
  physicalUrl: string;
  /** A network failure instead of an answer. */
  error?: string;
  status?: number;
  headers?: Headers;
  /** "sha256-<base64>" of the body, when it was read. */
  bodyIntegrity?: string;
  /** The digest the bindings give for this logical URL (docs/protocol.md, "Content digests"). */
  expectedIntegrity?: string;
  /** The checker's clock, for the server's Date header. */
  nowMs: number;
}

/** Beyond this the server's Date is reported: freshness (Expires, Age) is computed from it. */
const CLOCK_SKEW_WARNING_MS = 60_000;

function allowsOrigin(value: string | null, pageOrigin: string): boolean {
  if (value === null) return false;
  const trimmed = value.trim();
  return trimmed === '*' || trimmed === pageOrigin;
}

function listsOrigin(value: string | null, pageOrigin: string): boolean {
  return value !== null && value.split(',').some((part) => allowsOrigin(part, pageOrigin));
}

function parseUrl(value: string, base: string): URL | undefined {
  try {
    return new URL(value, base);
  } catch {
    return undefined;
  }
}

export function replicaFindings(answer: ReplicaAnswer): Finding[] {
  const unusable = (message: string): Finding => ({ severity: 'unusable', message });
  const warning = (message: string): Finding => ({ severity: 'warning', message });
  if (answer.error !== undefined) return [unusable(`not reachable (${answer.error}): the worker counts it as failed`)];
  const status = answer.status ?? 0;
  const headers = answer.headers ?? new Headers();
  const crossOrigin = new URL(answer.physicalUrl).origin !== answer.pageOrigin;
  const findings: Finding[] = [];

  if (status >= 300 && status < 400) {
    const location = headers.get('location');
    const target = location === null ? undefined : parseUrl(location, answer.physicalUrl);
    if (target !== undefined && target.host !== new URL(answer.physicalUrl).host) {
      findings.push(unusable(`redirects to another host (${target.href}): the worker cannot see where, and sends this URL to the site's own origin instead`));
    } else {
      findings.push(unusable(`answers ${status} (a redirect to ${location ?? 'nowhere'}): the worker wants the file itself at the physical URL, and sends this URL to the site's own origin instead`));
    }
  } else if (status === 404 || status === 410) {
    findings.push(unusable(`missing file (${status}): the replica does not hold it; deploy the same files to every host`));
  } else if (status !== 200 && status !== 206 && status !== 304) {
    findings.push(unusable(`answers status ${status}: the worker fails over to another replica`));
  }

  if (crossOrigin) {
    const allowOrigin = headers.get('access-control-allow-origin');
    if (allowOrigin === null) {
      findings.push(unusable(`no Access-Control-Allow-Origin header: the worker's CORS request fails (net::ERR_FAILED), so it never uses this replica; send "Access-Control-Allow-Origin: *"`));
    } else if (!allowsOrigin(allowOrigin, answer.pageOrigin)) {
      findings.push(unusable(`Access-Control-Allow-Origin is ${JSON.stringify(allowOrigin)}, not "*" or ${answer.pageOrigin}: the worker's CORS request fails`));
    } else if (allowOrigin.trim() !== '*' && !/(^|,)\s*(origin|\*)\s*(,|$)/i.test(headers.get('vary') ?? '')) {
      findings.push(warning(`Access-Control-Allow-Origin names ${allowOrigin} without "Vary: Origin": a shared cache may hand that answer to another site's request`));
    }
    if (!listsOrigin(headers.get('timing-allow-origin'), answer.pageOrigin)) {
      findings.push(warning(`no Timing-Allow-Origin header: Resource Timing hides the server's time to first byte, so the worker ranks it by whole fetch times; send "Timing-Allow-Origin: *"`));
    }
  }

  if (answer.expectedIntegrity !== undefined && answer.bodyIntegrity !== undefined && answer.expectedIntegrity !== answer.bodyIntegrity) {
    findings.push(unusable(`digest mismatch: the body hashes to ${answer.bodyIntegrity}, the bindings say ${answer.expectedIntegrity}: the worker rejects it (stale or different copy)`));
  }

  const dateMs = Date.parse(headers.get('date') ?? '');
  if (Number.isFinite(dateMs) && Math.abs(dateMs - answer.nowMs) > CLOCK_SKEW_WARNING_MS) {
    findings.push(warning(`its clock is ${Math.round((dateMs - answer.nowMs) / 1000)} s off (Date header): caches compute freshness from it`));
  }
  const cacheControl = (headers.get('cache-control') ?? '').toLowerCase();
  const expiresMs = Date.parse(headers.get('expires') ?? '');
  if (!/max-age|no-cache|no-store/.test(cacheControl) && Number.isFinite(expiresMs) && Number.isFinite(dateMs) && expiresMs < dateMs) {
    findings.push(warning('Expires is before Date: every answer is stale at once, and each use goes back to the server'));
  }
  if ((headers.get('vary') ?? '').trim() === '*') findings.push(warning('"Vary: *": no cache can reuse its answers'));
  return findings;
}
