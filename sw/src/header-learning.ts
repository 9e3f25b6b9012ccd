/**
 * The learn stage for headers: what a response from the site or one of its replicas says in
 * its bindings and control headers (docs/protocol.md). A replica's bindings pass the trust
 * rule first (trust.ts); only the own origin may switch the worker off (kill-switch.ts) or
 * give content digests (integrity.ts). A static host sends no header: its bindings come
 * from the static bindings file, line by line, as if each came in a header of the own origin.
 */
import { BINDINGS_HEADER } from '@webpp/core';
import type { BindingsDocument, ServerId } from '@webpp/core';
import type { BindingsStore, LearnResult } from './bindings-store.js';
import type { IntegrityStage } from './integrity-stage.js';
import { isSwitchOff } from './kill-switch.js';
import type { KillSwitch } from './kill-switch.js';
import { afterResponse } from './plugins.js';
import type { WorkerPlugin } from './plugins.js';
import type { PushedLoad } from './pushed-load.js';
import type { ClientAggregateStage } from './client-aggregate-stage.js';
import type { StateReporter } from './state-reporter.js';
import type { StaticBindings } from './static-bindings.js';
import type { TrustRule } from './trust.js';

export type WaitUntil = (promise: Promise<unknown>) => void;

export interface HeaderLearningOptions {
  bindings: BindingsStore;
  /** Where the own origin's content digests go (NO_INTEGRITY unless the integrity add-on is on). */
  integrity: IntegrityStage;
  trust: TrustRule;
  killSwitch: KillSwitch;
  staticBindings: StaticBindings;
  reporter: StateReporter;
  /** Server push: Server-Timing and webpp-load (pushed-load.ts). */
  pushed?: PushedLoad;
  /** The client aggregate for first visits (client-aggregate.ts): the own origin's webpp-aggregate. */
  aggregate?: ClientAggregateStage;
  /** The own origin answered (control-check.ts). */
  heardFromOwnOrigin(): void;
}

export class HeaderLearning {
  constructor(private readonly options: HeaderLearningOptions) {}

  /**
   * Reads the bindings and control headers of a response. `replica`: the server, when it is
   * not the site's own origin; what it says goes through the trust rule.
   */
  learnFrom(response: Response, from: string, waitUntil: WaitUntil, replica?: ServerId): void {
    const { trust, reporter } = this.options;
    const { headers } = response;
    if (replica === undefined) this.options.heardFromOwnOrigin();
    if (isSwitchOff(headers)) {
      if (replica === undefined) return this.switchOff(from, waitUntil);
      reporter.count('untrustedHeaders');
      reporter.event({ type: 'untrusted-header', atMs: Date.now(), header: 'webpp-control', server: replica, from });
    }
    const applying = this.applyBindings(headers, from, waitUntil, replica);
    // After the bindings: the servers they name are known to the trust rule when push rows about them are read.
    const readPushed = (): void => {
      this.options.pushed?.read(response, replica ?? trust.selfOrigin);
      if (replica === undefined) this.options.aggregate?.read(response);
    };
    if (applying === undefined) readPushed();
    else waitUntil(applying.then(readPushed));
  }

  /**
   * The bindings header of an own-origin response that a cache of the site's own answered
   * with (a Workbox precache, workbox.ts): the bindings only. Its control and load headers
   * are not news, and it is not word from the own origin.
   */
  learnCachedBindings(response: Response, from: string, waitUntil: WaitUntil): void {
    void this.applyBindings(response.headers, from, waitUntil, undefined);
  }

  /** Applies a response's bindings: at once, or (a compressed header, bindings-store.ts) when the returned promise settles. */
  private applyBindings(headers: Headers, from: string, waitUntil: WaitUntil, replica: ServerId | undefined): Promise<void> | undefined {
    const { bindings } = this.options;
    const learned = bindings.learn(headers, replica === undefined ? undefined : (document) => this.screen(document, replica, from));
    if (!(learned instanceof Promise)) return void this.applied(learned, from, waitUntil, replica);
    const applied = learned.then((result) => this.applied(result, from, waitUntil, replica));
    waitUntil(applied);
    return applied;
  }

  private applied(learned: LearnResult, from: string, waitUntil: WaitUntil, replica: ServerId | undefined): void {
    const { bindings, trust, integrity, reporter } = this.options;
    if (learned.kind === 'applied') {
      reporter.count('bindingsHeadersAccepted');
      if (replica === undefined && learned.document) {
        trust.learnServers(learned.document.bindings);
        trust.learnOwnVersion(learned.document.directoryVersion);
        if (learned.document.digests) integrity.learn(learned.document.digests, waitUntil);
      }
      if (learned.applied > 0) {
        waitUntil(bindings.changed());
        reporter.send({ type: 'bindings', atMs: Date.now(), count: bindings.size, directoryVersion: bindings.directoryVersion, applied: learned.applied, from });
      }
    } else if (learned.kind === 'rejected') {
      reporter.count('bindingsHeadersRejected');
      reporter.event({ type: 'bindings-rejected', atMs: Date.now(), code: learned.error.code, message: learned.error.message, from });
    }
  }

  /**
   * The own origin's static bindings file. The page waits for it only while the worker holds
   * no bindings at all (the file covers the whole site); otherwise it is revalidated in the
   * background.
   */
  async learnStaticBindings(waitUntil: WaitUntil): Promise<void> {
    const { staticBindings } = this.options;
    const from = staticBindings.url;
    const read = staticBindings.whenHeaderMissing((value) => this.learnFrom(new Response(null, { headers: { [BINDINGS_HEADER]: value } }), from, waitUntil));
    if (this.options.bindings.size === 0) await read;
    else waitUntil(read);
  }

  /** A replica's bindings, as the trust rule allows them; dropped rows are counted and reported. */
  private screen(document: BindingsDocument, replica: ServerId, from: string): BindingsDocument {
    const { trust, reporter } = this.options;
    const screened = trust.screen(document);
    if (screened.dropped.length > 0) {
      reporter.count('untrustedBindings', screened.dropped.length);
      reporter.event({ type: 'untrusted-bindings', atMs: Date.now(), server: replica, from, dropped: screened.dropped.slice(0, 8), droppedCount: screened.dropped.length });
    }
    return screened.document;
  }

  /** The remote kill switch: binding stops before this response is even returned. */
  private switchOff(from: string, waitUntil: WaitUntil): void {
    const { killSwitch, reporter } = this.options;
    if (killSwitch.isOff) return;
    waitUntil(killSwitch.switchOff());
    reporter.event({ type: 'control-off', atMs: Date.now(), from });
    reporter.flushEvents();
  }
}

/**
 * fetchDidSucceed: the headers of every answer below 500; a replica's pass the trust rule
 * (trust.ts). Read once the page has its answer (RespondIO.afterResponse): for the page's own
 * answer in the same task, before any other request of the page reaches the worker, so its
 * bindings and a switch-off still hold for all of them.
 */
export function headerLearningPlugin(headers: HeaderLearning, trust: TrustRule): WorkerPlugin {
  return {
    fetchDidSucceed({ bound, exchange, response, outcome }) {
      if (outcome === 'server-error') return;
      afterResponse(bound.io, () => headers.learnFrom(response, bound.logicalUrl, bound.io.waitUntil, trust.isOwn(exchange.server, response.url) ? undefined : exchange.server));
    },
  };
}
