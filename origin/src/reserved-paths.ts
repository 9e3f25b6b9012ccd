/**
 * Paths the origin answers itself, which no replica and no directory entry may take: the
 * whole /.well-known/webpp/ tree (management, peers, name service, health, statistics),
 * the page script and the Service Worker (scriptPath, workerPath), the worker's add-ons
 * beside it, and their source maps.
 * A replica there would be shadowed by the origin's own route, or would replace the
 * worker's code on the servers that bind it.
 */
import { WELL_KNOWN_PREFIX } from '@webpp/core';
import { WORKER_ADDON_FILES, workerAddonPath } from './client-scripts.js';
import type { ResolvedOptions } from './options.js';

/** Why `path` is reserved, or undefined when it is free. */
export function reservedPathReason(path: string, options: Pick<ResolvedOptions, 'scriptPath' | 'workerPath'>): string | undefined {
  if (path.startsWith(WELL_KNOWN_PREFIX) || `${path}/` === WELL_KNOWN_PREFIX) return `it is under ${WELL_KNOWN_PREFIX}, reserved for webpp itself`;
  const addons = WORKER_ADDON_FILES.map((file) => workerAddonPath(options.workerPath, file));
  const own = [options.scriptPath, options.workerPath, ...addons].flatMap((script) => [script, `${script}.map`]);
  if (own.includes(path)) return 'it is served by webpp itself (client scripts and their source maps)';
  return undefined;
}

/**
 * The reserved path a directory pair would bind, if any: the path of an exact logical or
 * physical URL, or a prefix entry inside /.well-known/webpp/ (a prefix such as "/*" that
 * merely covers a reserved path is fine: the origin's own routes still answer there).
 */
export function reservedPairReason(
  pair: readonly [logical: string, physical: string],
  options: Pick<ResolvedOptions, 'scriptPath' | 'workerPath'>,
): { url: string; reason: string } | undefined {
  for (const spec of pair) {
    const prefix = spec.endsWith('*');
    let path: string;
    try {
      path = new URL(prefix ? spec.slice(0, -1) : spec).pathname;
    } catch {
      continue;
    }
    const reason = prefix ? (path.startsWith(WELL_KNOWN_PREFIX.slice(0, -1)) ? `it is under ${WELL_KNOWN_PREFIX}` : undefined) : reservedPathReason(path, options);
    if (reason !== undefined) return { url: spec, reason };
  }
  return undefined;
}
