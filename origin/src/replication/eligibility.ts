/**
 * Which of this server's resources automatic replication may touch (operator control, and
 * Algorithm 1 step 2 of DCWS: "remove all the well-known entry points"):
 * - only on a home server: one whose logical origin is its own public URL (its physical
 *   URLs are the logical ones, the primary copies); a server holding others' replicas
 *   never re-replicates them;
 * - only paths under one of `autoReplicatePrefixes`;
 * - never a pinned entry point (`autoReplicatePinned`: exact paths, or `…*` prefixes),
 *   nor, with `autoReplicatePinPages`, an HTML page (judged by its path: html-pages.ts);
 * - never the client scripts;
 * - never a resource already covered by a prefix entry of the directory (an exact entry
 *   would shadow the prefix's replicas), nor one listed as a replica of another logical URL.
 */
import { canonicalUrl } from '@webpp/core';
import type { ReplicationDirectory } from '../directory/replication-directory.js';
import { isPagePath } from '../html-pages.js';
import type { ResolvedOptions } from '../options.js';

function pinTest(pins: readonly string[]): (path: string) => boolean {
  const exact = new Set(pins.filter((pin) => !pin.endsWith('*')));
  const prefixes = pins.filter((pin) => pin.endsWith('*')).map((pin) => pin.slice(0, -1));
  return (path) => exact.has(path) || prefixes.some((prefix) => path.startsWith(prefix));
}

export interface Eligibility {
  /** False when this server is home of nothing (its logical origin is another server's). */
  isHome: boolean;
  eligible(path: string): boolean;
  logicalUrlOf(path: string): string | undefined;
}

export function eligibility(
  options: Pick<ResolvedOptions, 'publicUrl' | 'logicalOrigin' | 'scriptPath' | 'workerPath' | 'autoReplicatePrefixes' | 'autoReplicatePinned' | 'autoReplicatePinPages'>, directory: ReplicationDirectory): Eligibility {
  const isHome = options.logicalOrigin === options.publicUrl;
  const pinned = pinTest(options.autoReplicatePinned);
  const clientScripts = new Set([options.scriptPath, options.workerPath].flatMap((path) => [path, `${path}.map`]));
  const logicalUrlOf = (path: string): string | undefined => canonicalUrl(options.logicalOrigin + path);
  return {
    isHome,
    logicalUrlOf,
    eligible(path) {
      if (!isHome || !options.autoReplicatePrefixes.some((prefix) => path.startsWith(prefix))) return false;
      if (pinned(path) || (options.autoReplicatePinPages && isPagePath(path)) || clientScripts.has(path)) return false;
      const logical = logicalUrlOf(path);
      if (logical === undefined) return false;
      const match = directory.lookup(logical);
      if (match?.binding.prefix === true) return false;
      const servedAs = directory.logicalOf(logical);
      return servedAs === undefined || servedAs === logical;
    },
  };
}
