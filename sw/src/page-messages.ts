/**
 * The page script's messages ({type: 'webpp:state'} and {type: 'webpp:flush'}), answered on
 * the transferred MessagePort once the stored state is loaded.
 */
import { FLUSH_REQUEST, STATE_REQUEST } from './messages.js';
import type { WorkerStateSnapshot } from './messages.js';

export interface PageMessageHandlers {
  ready: Promise<void>;
  snapshot(): WorkerStateSnapshot;
  flush(): Promise<void>;
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
    }
  });
}
