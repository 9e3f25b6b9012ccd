/**
 * The learn stage for server push (issue 13; Fei et al., INFOCOM 1998, Section 4): every
 * response from the site or a replica may carry the answering server's pushed service time
 * (`Server-Timing: webpp;dur=12.5;util=0.62`) and its latest values for the other replicas
 * (`webpp-load`, docs/protocol.md), each with the server's utilisation `util` (the busy share
 * of its last measurement interval, 0–1) when it said. Each value goes to the policy's pushed-service-time
 * input, which calibrates it with the worker's own measurements (A = R / S), so a replica's
 * load is known before the worker ever talked to it.
 *
 * Trust (docs/protocol.md, "Trust rule"): a server's own Server-Timing is its own claim; a
 * `webpp-load` row counts only for a server the site already uses (trust.ts), so a replica
 * cannot introduce a server, and a row's value is never dated in the future.
 */
import { LOAD_HEADER, parseLoadHeader, parseServerTiming, parseServerTimingUtilisation, SERVER_TIMING_HEADER } from '@webpp/core';
import type { ClientPolicy, ServerId } from '@webpp/core';

/** The policy's input (e.g. the webpp policy's learnPushedServiceTime); `utilisation` (0–1) when the server said. */
export type PushedServiceTimeSink = (server: ServerId, serviceMs: number, atMs: number, utilisation?: number) => void;

export interface PushedLoadOptions {
  sink: PushedServiceTimeSink;
  /** Servers the site uses (TrustRule.isKnownServer). */
  isKnownServer(server: ServerId): boolean;
  /** The engine's clock (Date.now in the worker). */
  now?: () => number;
}

/** The newest value per server, as the state snapshot shows it. */
export interface PushedLoadView {
  server: ServerId;
  serviceMs: number;
  /** The utilisation pushed with this value (0–1); absent when the server did not say. */
  utilisation?: number;
  atMs: number;
  /** Where it came from: the server itself, or another replica's webpp-load. */
  via: 'server-timing' | 'webpp-load';
}

/** Bounds the remembered servers (the view only; the policy keeps its own state). */
const MAX_SERVERS = 256;

export class PushedLoad {
  private readonly latest = new Map<ServerId, PushedLoadView>();
  /** Values handed to the policy. */
  learned = 0;

  constructor(private readonly options: PushedLoadOptions) {}

  /** Reads both headers of a response that `server` answered. Never throws. */
  read(response: Response, server: ServerId): void {
    try {
      const nowMs = (this.options.now ?? Date.now)();
      const { headers } = response;
      const serverTiming = headers.get(SERVER_TIMING_HEADER);
      const own = parseServerTiming(serverTiming);
      if (own !== undefined) this.learn({ server, serviceMs: own, utilisation: parseServerTimingUtilisation(serverTiming), atMs: nowMs, via: 'server-timing' });
      for (const load of parseLoadHeader(headers.get(LOAD_HEADER))) {
        if (load.server === server || !this.options.isKnownServer(load.server)) continue;
        this.learn({ server: load.server, serviceMs: load.serviceMs, utilisation: load.utilisation, atMs: nowMs - load.ageMs, via: 'webpp-load' });
      }
    } catch {
      // Fail open: a header we cannot read teaches nothing.
    }
  }

  views(): PushedLoadView[] {
    return [...this.latest.values()].sort((a, b) => (a.server < b.server ? -1 : a.server > b.server ? 1 : 0));
  }

  private learn(received: PushedLoadView): void {
    // Without a utilisation, the view has no such key (the state view shows it as sent).
    const { utilisation, ...rest } = received;
    const view: PushedLoadView = utilisation === undefined ? rest : received;
    const held = this.latest.get(view.server);
    // An older value relayed by another replica does not replace a newer one.
    if (held !== undefined && held.atMs > view.atMs) return;
    if (held === undefined && this.latest.size >= MAX_SERVERS) {
      const oldest = this.latest.keys().next().value;
      if (oldest !== undefined) this.latest.delete(oldest);
    }
    this.latest.delete(view.server);
    this.latest.set(view.server, view);
    this.learned += 1;
    this.options.sink(view.server, view.serviceMs, view.atMs, view.utilisation);
  }
}

/** The policy's pushed-service-time input, when it has one (the webpp policy); `changed` persists the state. */
export function policyPushSink(policy: ClientPolicy, changed: () => void): PushedServiceTimeSink {
  return (server, serviceMs, atMs, utilisation) => {
    if (policy.learnPushedServiceTime === undefined) return;
    policy.learnPushedServiceTime(server, serviceMs, atMs, utilisation);
    changed();
  };
}
