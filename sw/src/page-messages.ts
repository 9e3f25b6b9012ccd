/**
 * The page script's messages ({type: 'webpp:state'}, {type: 'webpp:flush'} and
 * {type: 'webpp:relocate', urls, failed, pageUrl}), answered on the transferred MessagePort
 * once the stored state is loaded; and its reports of Resource Timing and failed elements
 * ({type: 'webpp:timing', entries, failed}; direct.ts), not answered.
 */
import { parsePageTiming } from './direct.js';
import { parseRelocateQuery } from './embed-relocation.js';
import type { RelocateQuery } from './embed-relocation.js';
import { FLUSH_REQUEST, PAGE_TIMING_MESSAGE, RELOCATE_REQUEST, STATE_REQUEST } from './messages.js';
import type { WorkerStateSnapshot } from './messages.js';

export interface PageMessageHandlers {
  ready: Promise<void>;
  snapshot(): WorkerStateSnapshot;
  /** `fromPage`: the page script's own request (no answer wanted), by that page's client id. */
  flush(fromPage?: string): Promise<void>;
  relocate(query: RelocateQuery): Promise<(string | null)[]>;
  /** The page's Resource Timing and failed elements (direct.ts); `pageId` is the posting page's client id. */
  timing(pageId: string | undefined, report: ReturnType<typeof parsePageTiming>): Promise<void> | undefined;
}

export function listenToPages(scope: Pick<ServiceWorkerGlobalScope, 'addEventListener'>, handlers: PageMessageHandlers): void {
  scope.addEventListener('message', (event: ExtendableMessageEvent) => {
    // Only objects have a `type`: the parsers below read the fields they need, and check them.
    const data = event.data as { type?: unknown } | null;
    const type = data?.type;
    const port = event.ports[0];
    const page = (event.source as { id?: string } | null)?.id;
    if (type === PAGE_TIMING_MESSAGE) {
      const report = parsePageTiming(data);
      event.waitUntil(handlers.ready.then(() => handlers.timing(page, report)));
    } else if (type === FLUSH_REQUEST) {
      // Without a port: the page script's own request, at its load's end or when hidden.
      event.waitUntil(handlers.ready.then(() => handlers.flush(port ? undefined : page)).then(() => port?.postMessage(true)));
    } else if (!port) {
      // The other requests are answered on their port.
    } else if (type === STATE_REQUEST) {
      event.waitUntil(handlers.ready.then(() => port.postMessage(handlers.snapshot())));
    } else if (type === RELOCATE_REQUEST) {
      const query = parseRelocateQuery(data);
      const answer = query ? handlers.ready.then(() => handlers.relocate(query)) : Promise.resolve([]);
      event.waitUntil(answer.catch(() => []).then((urls) => port.postMessage(urls)));
    }
  });
}
