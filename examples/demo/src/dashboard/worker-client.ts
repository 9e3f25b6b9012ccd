/**
 * Reads the webpp Service Worker's state (sw/src/messages.ts): a snapshot on request over
 * a MessageChannel, and a nudge whenever the worker broadcasts live events.
 */
import type { WebppEvent, WorkerStateSnapshot } from '@webpp/sw';

/** sw/src/messages.ts STATE_REQUEST and EVENT_CHANNEL (kept literal: the dashboard bundle imports no worker code). */
const STATE_REQUEST = 'webpp:state';
const EVENT_CHANNEL = 'webpp';
/** messages.ts EVENTS_SUBSCRIBE, EVENTS_HELLO, EVENTS_LEASE_MS: the worker publishes only to subscribers. */
const EVENTS_SUBSCRIBE = 'webpp:subscribe';
const EVENTS_HELLO = 'webpp:hello';
const EVENTS_LEASE_MS = 60_000;

export type { WebppEvent, WorkerStateSnapshot };

export type WorkerStatus =
  | { kind: 'unsupported' }
  | { kind: 'not-controlling' }
  | { kind: 'unresponsive'; message: string }
  | { kind: 'ok'; snapshot: WorkerStateSnapshot };

export class WorkerClient {
  private readonly channel: BroadcastChannel | undefined;
  private readonly renewal: ReturnType<typeof setInterval> | undefined;

  constructor(onEvents: (events: WebppEvent[]) => void) {
    this.channel = typeof BroadcastChannel === 'function' ? new BroadcastChannel(EVENT_CHANNEL) : undefined;
    this.channel?.addEventListener('message', (message: MessageEvent<unknown>) => {
      const data = message.data;
      if (!Array.isArray(data)) {
        if ((data as { type?: unknown } | null)?.type === EVENTS_HELLO) this.subscribe();
        return;
      }
      onEvents(data as WebppEvent[]);
    });
    this.subscribe();
    this.renewal = this.channel ? setInterval(() => this.subscribe(), EVENTS_LEASE_MS / 3) : undefined;
  }

  private subscribe(): void {
    this.channel?.postMessage({ type: EVENTS_SUBSCRIBE });
  }

  /** Asks the worker that controls this page for its state; bounded by timeoutMs. */
  async status(timeoutMs = 2000): Promise<WorkerStatus> {
    if (!('serviceWorker' in navigator)) return { kind: 'unsupported' };
    const controller = navigator.serviceWorker.controller;
    if (!controller) return { kind: 'not-controlling' };
    const { port1, port2 } = new MessageChannel();
    try {
      const snapshot = await new Promise<WorkerStateSnapshot>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
        port1.onmessage = (message: MessageEvent<unknown>) => {
          clearTimeout(timer);
          const data = message.data as Partial<WorkerStateSnapshot> | undefined;
          if (data && data.type === STATE_REQUEST && Array.isArray(data.servers)) resolve(data as WorkerStateSnapshot);
          else reject(new Error('unexpected answer from the worker'));
        };
        controller.postMessage({ type: STATE_REQUEST }, [port2]);
      });
      return { kind: 'ok', snapshot };
    } catch (error) {
      return { kind: 'unresponsive', message: error instanceof Error ? error.message : String(error) };
    } finally {
      port1.close();
    }
  }

  close(): void {
    clearInterval(this.renewal);
    this.channel?.close();
  }
}
