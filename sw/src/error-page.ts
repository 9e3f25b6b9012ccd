/**
 * The page a navigation gets when no replica could serve it: readable, listing every
 * attempt, never cached. Subresources get a network error instead (what the page would
 * have seen from a single dead server).
 */
import type { AttemptRecord } from './messages.js';

const OUTCOME_TEXT: Record<AttemptRecord['outcome'], string> = {
  served: 'served',
  timeout: 'no answer in time',
  'network-error': 'could not connect',
  'server-error': 'server error',
  stale: 'does not hold the resource',
  cancelled: 'cancelled',
  aborted: 'aborted',
};

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

export function navigationErrorPage(logicalUrl: string, attempts: readonly AttemptRecord[]): Response {
  const allTimedOut = attempts.length > 0 && attempts.every((attempt) => attempt.outcome === 'timeout');
  const status = allTimedOut ? 504 : 502;
  const rows = attempts
    .map((attempt) => {
      const detail = attempt.status !== undefined ? `HTTP ${attempt.status}` : (attempt.error ?? '');
      const elapsed = attempt.ttfbMs !== undefined ? `${Math.round(attempt.ttfbMs)} ms` : `timeout ${attempt.timeoutMs} ms`;
      return `<tr><td>${escapeHtml(attempt.target)}</td><td>${escapeHtml(OUTCOME_TEXT[attempt.outcome])}</td><td>${escapeHtml(detail)}</td><td>${escapeHtml(elapsed)}</td></tr>`;
    })
    .join('');
  // One line: whitespace between the elements would render as nothing.
  const html =
    `<!doctype html>` +
    `<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">` +
    `<title>Page unavailable</title>` +
    `<style>body{font:16px/1.5 system-ui,sans-serif;max-width:48rem;margin:3rem auto;padding:0 1rem;color:#222}` +
    `table{border-collapse:collapse;width:100%;font-size:14px}td,th{border-bottom:1px solid #ddd;padding:.4rem;text-align:left;word-break:break-all}` +
    `code{background:#f3f3f3;padding:.1rem .3rem}</style></head>` +
    `<body><h1>This page is unavailable right now</h1>` +
    `<p>None of the servers that hold <code>${escapeHtml(logicalUrl)}</code> answered. Please try again in a moment.</p>` +
    `<table id="webpp-attempts"><thead><tr><th>Replica</th><th>Result</th><th>Detail</th><th>Time</th></tr></thead>` +
    `<tbody>` +
    `${rows}` +
    `</tbody></table>` +
    `<p><button onclick="location.reload()">Try again</button></p>` +
    `</body></html>`;
  return new Response(html, {
    status,
    statusText: allTimedOut ? 'Gateway Timeout' : 'Bad Gateway',
    headers: { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store', 'x-webpp-error': 'all-replicas-failed' },
  });
}
