/**
 * The worker's trust rule (docs/protocol.md, "Trust rule"). The worker reads webpp headers
 * from two kinds of responses: those of the site's own origin (the worker's own origin, the
 * site that installed it) and those of its replicas, which are other origins. Replicas are
 * mirrors, not owners, so what they say is screened:
 *
 *  - `webpp-control: off` counts only from the own origin (a replica cannot switch the
 *    worker off);
 *  - a replica's binding row counts only when its logical URL is on the own origin and
 *    every server it binds to is one the site already uses (named by the own origin, now or
 *    earlier): a replica cannot send the site's URLs to a server nobody named;
 *  - content digests count only from the own origin: a replica cannot set or change the
 *    digest its own bytes are checked against;
 *  - a replica's rows never carry a directory version above the highest the own origin has
 *    sent: bindings are replaced only by equal or newer versions, so a replica claiming a
 *    huge version would otherwise pin its rows against every later header of the site.
 *
 * Pure: no I/O, no clock. The caller says where a response came from.
 */
import { serverOf } from '@webpp/core';
import type { Binding, BindingsDocument, ServerId } from '@webpp/core';

/** Why a replica's binding row was dropped. */
type UntrustedReason = 'foreign-logical-url' | 'unknown-server';

export interface DroppedRow {
  logical: string;
  reason: UntrustedReason;
  /** For 'unknown-server': the first server nobody named. */
  server?: ServerId;
}

export interface ScreenResult {
  /** What may be applied: the rows that passed, and no digests. */
  document: BindingsDocument;
  dropped: DroppedRow[];
  /** Digests the replica sent, all ignored. */
  ignoredDigests: number;
}

export class TrustRule {
  private readonly known = new Set<ServerId>();
  /** The highest directory version the own origin has sent (headers, stored bindings). */
  private ownDirectoryVersion = 0;

  /** `selfOrigin`: the site's own origin (the worker's `self.location.origin`). */
  constructor(readonly selfOrigin: string) {}

  /**
   * True when a response came from the site's own origin: the server asked was the own
   * origin, and the response did not end up elsewhere (`finalUrl`: response.url, '' if unknown).
   */
  isOwn(server: ServerId, finalUrl = ''): boolean {
    if (server !== this.selfOrigin) return false;
    return finalUrl === '' || originOf(finalUrl) === this.selfOrigin;
  }

  /** Servers the site uses: the own origin and every server named in trusted bindings. */
  isKnownServer(server: ServerId): boolean {
    return server === this.selfOrigin || this.known.has(server);
  }

  /** Remembers the servers of bindings the site itself gave (the own origin's headers, stored bindings). */
  learnServers(bindings: readonly Binding[]): void {
    for (const binding of bindings) {
      for (const replica of binding.replicas) {
        const server = originOf(replica);
        if (server !== undefined) this.known.add(server);
      }
    }
  }

  /** Remembers the directory version of bindings the site itself gave. */
  learnOwnVersion(directoryVersion: number): void {
    if (Number.isSafeInteger(directoryVersion)) this.ownDirectoryVersion = Math.max(this.ownDirectoryVersion, directoryVersion);
  }

  /** The part of a replica's bindings document the worker may apply (see the module comment). */
  screen(document: BindingsDocument): ScreenResult {
    const kept: Binding[] = [];
    const dropped: DroppedRow[] = [];
    for (const binding of document.bindings) {
      const verdict = this.judge(binding);
      if (verdict === undefined) kept.push(binding);
      else dropped.push(verdict);
    }
    return {
      document: { directoryVersion: Math.min(document.directoryVersion, this.ownDirectoryVersion), bindings: kept },
      dropped,
      ignoredDigests: document.digests?.length ?? 0,
    };
  }

  private judge(binding: Binding): DroppedRow | undefined {
    if (originOf(binding.logical) !== this.selfOrigin) return { logical: binding.logical, reason: 'foreign-logical-url' };
    for (const replica of binding.replicas) {
      const server = originOf(replica);
      if (server === undefined || !this.isKnownServer(server)) {
        return { logical: binding.logical, reason: 'unknown-server', ...(server === undefined ? {} : { server }) };
      }
    }
    return undefined;
  }
}

function originOf(url: string): ServerId | undefined {
  try {
    return serverOf(url);
  } catch {
    return undefined;
  }
}
