/**
 * <object data> and <embed src> loads never reach the worker in Chromium (they are fetched
 * past it, `fromServiceWorker` false), so when the page's own origin is down they fail even
 * though the worker served the page itself from a replica (issue 25, item 3). The page
 * script (webpp.ts) asks here, for its object and embed elements, where to load them from:
 *  - null: leave the element alone (no bindings, or its own server is up);
 *  - a live replica's physical URL, in the policy's order, when the element's load failed,
 *    its own server is known failed, or a HEAD of it, sent when the page itself did not come
 *    from that server, fails. The page then moves the element there.
 * The URL's own server is checked only when the page's last navigation did not show it up,
 * so a page served by its own origin costs no request.
 */
import { serverOf } from '@webpp/core';
import type { ResolvedBinding, ServerId } from '@webpp/core';

/** What a page asks: its elements' URLs, whether they are known to have failed, its own URL. */
export interface RelocateQuery {
  urls: string[];
  failed: boolean;
  pageUrl: string;
}

export interface EmbedRelocationOptions {
  resolve(url: string): ResolvedBinding | undefined;
  /** Physical URLs of `resolved`, in the order the policy would try them. */
  ordered(resolved: ResolvedBinding): string[];
  isFailed(server: ServerId): boolean;
  /** The server that answered the last navigation to `pageUrl`, if the worker saw one. */
  servedPage(pageUrl: string): ServerId | undefined;
  /** The worker's plain fetch (not intercepted). */
  fetch: (request: Request) => Promise<Response>;
}

/** A HEAD of the own server gets this long (ms) before the server counts as down. */
const OWN_SERVER_CHECK_TIMEOUT_MS = 3_000;
/** At most this many elements per question (a page's own count is far lower). */
const MAX_URLS = 100;

/** The query from a page's message, or undefined when it is malformed. */
export function parseRelocateQuery(data: unknown): RelocateQuery | undefined {
  const { urls, failed, pageUrl } = data as Partial<RelocateQuery>;
  if (!Array.isArray(urls) || urls.length > MAX_URLS || !urls.every((url) => typeof url === 'string' && url.length <= 8_192)) return undefined;
  if (typeof pageUrl !== 'string' || typeof failed !== 'boolean') return undefined;
  return { urls, failed, pageUrl };
}

export async function relocateEmbeds(query: RelocateQuery, options: EmbedRelocationOptions): Promise<(string | null)[]> {
  const down = new Map<ServerId, Promise<boolean>>();
  const isDown = (url: string, server: ServerId): Promise<boolean> => {
    if (query.failed || options.isFailed(server)) return Promise.resolve(true);
    if (options.servedPage(query.pageUrl) === server) return Promise.resolve(false);
    let answer = down.get(server);
    if (!answer) down.set(server, (answer = headFails(url, options.fetch)));
    return answer;
  };
  return Promise.all(
    query.urls.map(async (url) => {
      const resolved = options.resolve(url);
      if (!resolved) return null;
      let own: ServerId;
      try {
        own = serverOf(url);
      } catch {
        return null;
      }
      if (!(await isDown(url, own))) return null;
      return options.ordered(resolved).find((physical) => serverOf(physical) !== own && !options.isFailed(serverOf(physical))) ?? null;
    }),
  );
}

async function headFails(url: string, fetch: (request: Request) => Promise<Response>): Promise<boolean> {
  try {
    const request = new Request(url, { method: 'HEAD', cache: 'no-store', redirect: 'manual', signal: AbortSignal.timeout(OWN_SERVER_CHECK_TIMEOUT_MS) });
    const response = await fetch(request);
    return response.status >= 500;
  } catch {
    return true;
  }
}
