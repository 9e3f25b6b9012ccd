/**
 * Resources of a page load that failed with a network error (a refused or reset connection,
 * a response cut short), which the status checks (≥ 400) do not see: Resource Timing gives
 * such a fetch `responseStatus` 0 (Resource Timing's responseStatus is the response's status,
 * 0 for a network error and for a response that is not CORS-same-origin; Fetch, "finalize and
 * report timing").
 *
 * Other entries also carry 0, and are not failures the page had:
 * - a cross-origin resource without CORS (its status is hidden): only the page's own origin
 *   counts here (the chaos site's resources all are, the worker serving them from replicas);
 * - the browser's own requests, not the page's (the favicon: initiatorType "other"; Chromium
 *   gives its network error an entry with status 0 too);
 * - a failed load the page made again and got (the page script loads a failed image or style
 *   sheet once more in its `error` event, sw/src/webpp.ts): a URL with another entry of a
 *   status from 1 to 399 is not counted.
 * A resource still loading has no entry yet (entries come at responseEnd), and an HTTP-cache
 * hit keeps the cached response's status.
 */

/** One Resource Timing entry: its URL, responseStatus and initiatorType. */
export type StatusEntry = readonly [url: string, status: number, initiatorType: string];

/** The URLs on `origin` whose entries show a network error and never a success, in order of their first entry. */
export function unrecoveredNetworkErrors(entries: readonly StatusEntry[], origin: string): string[] {
  const errored = new Set<string>();
  const loaded = new Set<string>();
  for (const [url, status, initiatorType] of entries) {
    if (!url.startsWith(`${origin}/`) || initiatorType === 'other') continue;
    if (status === 0) errored.add(url);
    else if (status < 400) loaded.add(url);
  }
  return [...errored].filter((url) => !loaded.has(url));
}
