/**
 * The BatchSource of a webpp origin: logical URLs come from the replication directory
 * (paper Section 2), exactly as the bindings header names them.
 */
import type { FastifyRequest } from 'fastify';
import { canonicalUrl } from '@webpp/core';
import type { ReplicationDirectory } from '../directory/replication-directory.js';
import type { KillSwitch } from '../http/kill-switch.js';
import type { ResolvedOptions } from '../options.js';
import type { BatchSource } from './register-batching.js';

function pathAndQuery(url: string): string {
  const parsed = new URL(url);
  return parsed.pathname + parsed.search;
}

export interface OriginBatchSourceOptions {
  options: Pick<ResolvedOptions, 'publicUrl' | 'cors' | 'scriptPath' | 'workerPath'>;
  directory: ReplicationDirectory;
  killSwitch: KillSwitch;
}

export function batchSourceFromOrigin({ options, directory, killSwitch }: OriginBatchSourceOptions): BatchSource {
  const ownOrigin = new URL(options.publicUrl).origin;
  return {
    cors: options.cors !== 'off',
    // The worker is being switched off: answer plain pages.
    active: () => !killSwitch.on,
    pageUrl(request: FastifyRequest) {
      const physical = canonicalUrl(options.publicUrl + request.url);
      if (physical === undefined) return undefined;
      return directory.logicalOf(physical) ?? physical;
    },
    localPathOf(logicalUrl: string) {
      // webpp's own scripts are the worker's business (it keeps its own copy of the page script).
      const path = new URL(logicalUrl).pathname;
      if (path === options.scriptPath || path === options.workerPath) return undefined;
      // A replica on this server, as the directory lists it (its path may differ from the logical one)…
      const match = directory.lookup(logicalUrl);
      const local = match?.physicalUrls.find((physical) => new URL(physical).origin === ownOrigin);
      if (local !== undefined) return pathAndQuery(local);
      // …or the primary copy, when the logical URL names this server.
      return new URL(logicalUrl).origin === ownOrigin ? pathAndQuery(logicalUrl) : undefined;
    },
  };
}
