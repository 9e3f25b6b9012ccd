/**
 * Client of the demo launcher's control endpoint (examples/demo/src/control-server.ts):
 * lists the replica servers and stops, restarts or slows one down. The launcher prints the
 * dashboard URL with `#control=<endpoint>&token=<token>`; the fragment never reaches a
 * server, and the dashboard keeps it in sessionStorage for later visits in this tab.
 */
import type { MachineLoadView, ReplicaView } from './model.js';

export interface ControlAccess {
  endpoint: string;
  token: string;
}

export type ReplicaAction = 'stop' | 'start' | 'slow' | 'restore';

const STORAGE_KEY = 'webpp-dashboard-control-v1';

/** Reads the control access from the URL fragment (and removes it from the address bar), else from sessionStorage. */
export function readControlAccess(location: Location, history: History, storage: Storage): ControlAccess | undefined {
  const fragment = new URLSearchParams(location.hash.replace(/^#/, ''));
  const endpoint = fragment.get('control');
  const token = fragment.get('token');
  if (endpoint && token && isLoopbackHttpUrl(endpoint)) {
    const access = { endpoint: endpoint.replace(/\/+$/, ''), token };
    storage.setItem(STORAGE_KEY, JSON.stringify(access));
    history.replaceState(null, '', location.pathname + location.search);
    return access;
  }
  try {
    const stored: unknown = JSON.parse(storage.getItem(STORAGE_KEY) ?? 'null');
    if (
      typeof stored === 'object' &&
      stored !== null &&
      typeof (stored as ControlAccess).endpoint === 'string' &&
      typeof (stored as ControlAccess).token === 'string' &&
      isLoopbackHttpUrl((stored as ControlAccess).endpoint)
    ) {
      return stored as ControlAccess;
    }
  } catch {
    // Fall through: no control access.
  }
  return undefined;
}

/** The control endpoint must be on this machine: never send the token anywhere else. */
function isLoopbackHttpUrl(value: string): boolean {
  try {
    const url = new URL(value);
    const host = url.hostname;
    return url.protocol === 'http:' && (host === 'localhost' || host.endsWith('.localhost') || host === '127.0.0.1' || host === '[::1]');
  } catch {
    return false;
  }
}

export class ControlClient {
  /** The demo machine's load with the last replica list (undefined from an older launcher). */
  machine: MachineLoadView | undefined;

  constructor(private readonly access: ControlAccess) {}

  async replicas(signal?: AbortSignal): Promise<ReplicaView[]> {
    const body = await this.request('GET', '/api/replicas', signal);
    const replicas = (body as { replicas?: unknown }).replicas;
    const machine = (body as { machine?: MachineLoadView }).machine;
    this.machine = typeof machine?.timerLagP95Ms === 'number' ? machine : undefined;
    if (!Array.isArray(replicas)) throw new Error('control endpoint: malformed replica list');
    return replicas as ReplicaView[];
  }

  async act(replicaId: string, action: ReplicaAction): Promise<ReplicaView> {
    const body = await this.request('POST', `/api/replicas/${encodeURIComponent(replicaId)}/${action}`);
    return (body as { replica: ReplicaView }).replica;
  }

  private async request(method: 'GET' | 'POST', path: string, signal?: AbortSignal): Promise<unknown> {
    const init: RequestInit = {
      method,
      headers: { authorization: `Bearer ${this.access.token}` },
      mode: 'cors',
      credentials: 'omit',
      cache: 'no-store',
    };
    if (signal) init.signal = signal;
    const response = await fetch(`${this.access.endpoint}${path}`, init);
    const text = await response.text();
    let body: unknown = undefined;
    try {
      body = text ? JSON.parse(text) : undefined;
    } catch {
      // Not JSON: reported below with the status.
    }
    if (!response.ok) {
      const message = (body as { message?: string } | undefined)?.message ?? text.slice(0, 200);
      throw new Error(`control endpoint answered ${response.status}: ${message}`);
    }
    return body;
  }
}
