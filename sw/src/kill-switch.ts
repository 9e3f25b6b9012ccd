/**
 * The remote switch-off. A site sends `webpp-control: off` (CONTROL_HEADER) on any response,
 * and the worker stops binding at once, remembers the decision in storage (so a worker
 * installed again soon after stays off), unregisters itself and tells every open page (the
 * page script then stops registering for offRetryMs).
 */
import { CONTROL_HEADER } from '@webpp/core';
import { CONTROL_OFF_MESSAGE } from './messages.js';
import { CONTROL_KEY } from './storage.js';
import type { KeyValueStore } from './storage.js';

export type PageNotifier = (message: { type: typeof CONTROL_OFF_MESSAGE }) => Promise<unknown>;

export interface KillSwitchOptions {
  storage: KeyValueStore;
  offRetryMs: number;
  unregister: () => Promise<unknown>;
  notifyPages: PageNotifier;
  /** The page that carried the switch-off is still loading: it is told again this much later. */
  renotifyAfterMs?: number;
}

/** True for a response that switches the worker off. */
export function isSwitchOff(headers: Headers): boolean {
  const value = headers.get(CONTROL_HEADER);
  return value !== null && value.trim().toLowerCase() === 'off';
}

export class KillSwitch {
  private off = false;

  constructor(private readonly options: KillSwitchOptions) {}

  get isOff(): boolean {
    return this.off;
  }

  /** Applies a stored switch-off younger than offRetryMs. Returns true if the worker is off. */
  async restore(stored: unknown): Promise<boolean> {
    if (!isRecentOff(stored, this.options.offRetryMs)) return false;
    this.off = true;
    void this.options.unregister().catch(() => undefined);
    void this.tellPages();
    return true;
  }

  /** Switches off now (synchronously: no later request is bound); resolves when stored, unregistered and told. */
  switchOff(): Promise<unknown> {
    this.off = true;
    return Promise.allSettled([
      this.options.storage.set(CONTROL_KEY, { off: true, atMs: Date.now() }),
      this.options.unregister(),
      this.tellPages(),
    ]);
  }

  private async tellPages(): Promise<void> {
    const message = { type: CONTROL_OFF_MESSAGE } as const;
    await this.options.notifyPages(message).catch(() => undefined);
    await new Promise((resolve) => setTimeout(resolve, this.options.renotifyAfterMs ?? 1_000));
    await this.options.notifyPages(message).catch(() => undefined);
  }
}

function isRecentOff(value: unknown, offRetryMs: number): boolean {
  if (typeof value !== 'object' || value === null) return false;
  const { off, atMs } = value as { off?: unknown; atMs?: unknown };
  return off === true && typeof atMs === 'number' && Date.now() - atMs < offRetryMs;
}

/** Posts to every window of the site, controlled or not (clients.matchAll): the switch-off here, unusable replicas' reports (unusable-replicas.ts). */
export function pageNotifier(): (message: object) => Promise<void> {
  const clients = (globalThis as unknown as { clients?: Clients }).clients;
  if (!clients) return () => Promise.resolve();
  return async (message) => {
    for (const client of await clients.matchAll({ type: 'window', includeUncontrolled: true })) client.postMessage(message);
  };
}
