/**
 * The page script's messages ({type: 'webpp:state'}, {type: 'webpp:flush'} and
 * {type: 'webpp:relocate', urls, failed, pageUrl}), answered on the transferred MessagePort
 * once the stored state is loaded.
 */
import { parseRelocateQuery } from './embed-relocation.js';
import type { RelocateQuery } from './embed-relocation.js';
import { FLUSH_REQUEST, RELOCATE_REQUEST, STATE_REQUEST } from './messages.js';
import type { WorkerStateSnapshot } from './messages.js';

export interface PageMessageHandlers {
  ready: Promise<void>;
  snapshot(): WorkerStateSnapshot;
  flush(): Promise<void>;
  relocate(query: RelocateQuery): Promise<(string | null)[]>;
}

export function listenToPages(scope: Pick<ServiceWorkerGlobalScope, 'addEventListener'>, handlers: PageMessageHandlers): void {
  scope.addEventListener('message', (event: ExtendableMessageEvent) => {
    const data: unknown = event.data;
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
