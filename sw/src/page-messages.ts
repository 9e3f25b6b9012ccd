/**
 * The page script's messages ({type: 'webpp:state'}, {type: 'webpp:flush'} and
 * {type: 'webpp:relocate', urls, failed, pageUrl}), answered on the transferred MessagePort
 * once the stored state is loaded; and its reports of Resource Timing and failed elements
 * ({type: 'webpp:timing', entries, failed}; direct.ts), answered only when the page sends a
 * port with one: the failed URLs it may load once more (their last request was left to the
 * browser), once the report is taken, so that the page's second load goes through the worker.
 */
import { parsePageTiming } from './direct.js';
import { parseRelocateQuery } from './embed-relocation.js';
import type { RelocateQuery } from './embed-relocation.js';
import { FLUSH_REQUEST, PAGE_TIMING_MESSAGE, RELOCATE_REQUEST, STATE_REQUEST } from './messages.js';
import type { WorkerStateSnapshot } from './messages.js';

export interface PageMessageHandlers {
  ready: Promise<void>;
  snapshot(): WorkerStateSnapshot;
  flush(): Promise<void>;
  relocate(query: RelocateQuery): Promise<(string | null)[]>;
  /** The page's Resource Timing and failed elements (direct.ts); `pageId` is the posting page's client id. */
  timing(pageId: string | undefined, report: ReturnType<typeof parsePageTiming>): { written: Promise<void> | undefined; retry: string[] };
}

export function listenToPages(scope: Pick<ServiceWorkerGlobalScope, 'addEventListener'>, handlers: PageMessageHandlers): void {
  scope.addEventListener('message', (event: ExtendableMessageEvent) => {
    const data: unknown = event.data;
    if (typeof data === 'object' && data !== null && (data as { type?: unknown }).type === PAGE_TIMING_MESSAGE) {
      const source = event.source as { id?: unknown } | null;
      const report = parsePageTiming(data);
      const port = event.ports[0];
      const taken = handlers.ready.then(() => {
        const { written, retry } = handlers.timing(typeof source?.id === 'string' ? source.id : undefined, report);
        port?.postMessage(retry);
        return written;
      });
      event.waitUntil(taken);
      return;
    }
    const port = event.ports[0];
    if (!port || typeof data !== 'object' || data === null) return;
    const type = (data as { type?: unknown }).type;
    if (type === STATE_REQUEST) {
      event.waitUntil(handlers.ready.then(() => port.postMessage(handlers.snapshot())));
    } else if (type === FLUSH_REQUEST) {
      event.waitUntil(handlers.ready.then(() => handlers.flush()).then(() => port.postMessage({ type: 'webpp:flushed' })));
    } else if (type === RELOCATE_REQUEST) {
      const query = parseRelocateQuery(data);
      const answer = query ? handlers.ready.then(() => handlers.relocate(query)) : Promise.resolve([]);
      event.waitUntil(answer.catch(() => []).then((urls) => port.postMessage(urls)));
    }
  });
}
