/**
 * What the worker remembers about individual physical URLs, beyond the latency table:
 *  - ProbeUrls: recent URLs each server is known to hold, so that a refresh or probe asks
 *    for "a randomly chosen resource" of that server (paper Section 4.1); with their body
 *    sizes when known, so that a ranged refresh, which times the body (issue 11), asks for a
 *    resource at least as large as its range;
 *  - StaleBindings: physical URLs that answered 404/410 for a directory version; they are
 *    tried last until newer bindings arrive (never dropped: the replica may be back); at
 *    most 1 000, the oldest forgotten first.
 */
import type { RandomSource, ServerId } from '@webpp/core';
import type { WorkerPlugin } from './plugins.js';
import type { SizeMemory } from './size-memory.js';
import { BoundedMap } from './_private/bounded-map.js';

export class ProbeUrls {
  private readonly urls = new Map<ServerId, string[]>();
  private readonly sizes = new Map<string, number>();

  constructor(private readonly perServer = 8) {}

  remember(server: ServerId, url: string, sizeBytes?: number): void {
    if (sizeBytes !== undefined) this.sizes.set(url, sizeBytes);
    const known = this.urls.get(server);
    if (!known) {
      this.urls.set(server, [url]);
      return;
    }
    if (known.includes(url)) return;
    known.push(url);
    if (known.length > this.perServer) this.sizes.delete(known.shift() as string);
  }

  forget(server: ServerId, url: string): void {
    const known = this.urls.get(server);
    const index = known?.indexOf(url) ?? -1;
    if (known && index !== -1) {
      known.splice(index, 1);
      this.sizes.delete(url);
    }
  }

  /**
   * A random known URL of the server, else its root; with minSizeBytes, a random one of those
   * known to be at least that large when there is one (a ranged refresh of a 512-byte file
   * times no body worth the name).
   */
  pick(server: ServerId, random: RandomSource, minSizeBytes?: number): string {
    const all = this.urls.get(server);
    if (!all || all.length === 0) return `${server}/`;
    const large = minSizeBytes === undefined ? [] : all.filter((url) => (this.sizes.get(url) ?? 0) >= minSizeBytes);
    const known = large.length > 0 ? large : all;
    return known[Math.min(known.length - 1, Math.floor(random() * known.length))] as string;
  }
}

export class StaleBindings {
  private readonly staleAt: BoundedMap<string, number>;

  constructor(capacity = 1_000) {
    this.staleAt = new BoundedMap(capacity);
  }

  /** When full, the URL noted longest ago is forgotten first. */
  note(physicalUrl: string, directoryVersion: number): void {
    this.staleAt.set(physicalUrl, directoryVersion);
  }

  /** True when this physical URL answered 404/410 under this directory version or a newer one. */
  isStale(physicalUrl: string, directoryVersion: number): boolean {
    const version = this.staleAt.get(physicalUrl);
    return version !== undefined && version >= directoryVersion;
  }
}

/** What the plan stage reads of the replicas' URLs (plan.ts), and the plugin that keeps it. */
export interface ServerMemory {
  probeUrls: ProbeUrls;
  staleBindings: StaleBindings;
  /** Sizes of earlier responses, for resources whose binding carries none. */
  sizes: SizeMemory;
}

/** fetchDidSucceed: a whole answer's size; a 404/410 makes its physical URL stale for this directory version. */
export function serverMemoryPlugin(memory: ServerMemory): WorkerPlugin {
  return {
    fetchDidSucceed({ bound, exchange, response, outcome, resume }) {
      if (outcome !== 'server-error' && !resume) memory.sizes.learn(bound.logicalUrl, response);
      if (outcome === 'stale') {
        memory.staleBindings.note(exchange.target, bound.resolved.directoryVersion);
        memory.probeUrls.forget(exchange.server, exchange.target);
      }
    },
  };
}
