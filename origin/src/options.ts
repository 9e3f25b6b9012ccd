/**
 * Options of the webppOrigin plugin: the types and the validation with defaults, both
 * derived from the one definition in options/plugin-schema.ts. The table in
 * docs/origin.md ("Plugin options") is generated from it too (`npm run docs:options`).
 */
import type { Static } from 'typebox';
import { WEBPP_ERR_BAD_OPTIONS } from './errors.js';
import { canonicalUrl } from '@webpp/core';
import { resolveBatchOptions } from './batch/batch-options.js';
import { pluginOptionsSchema } from './options/plugin-schema.js';
import { compileOptions, optionPath, type PathNamer } from './options/compile-options.js';
import type { Resolved } from './options/resolved.js';
import { internalsOf, removedOptionsProblem, type InternalConstants, type WEBPP_INTERNALS } from './options/internals.js';

export type { ReplicaOperation, FilterVeto, PreFilter, ReplicaOutcome, PushOutcome, PostFilter } from './options/filters.js';
export { pluginOptionsSchema };

/** The plugin's options, as callers pass them (WEBPP_INTERNALS: this repository's tests only, options/internals.ts). */
export type WebppOriginOptions = Static<typeof pluginOptionsSchema> & { [WEBPP_INTERNALS]?: Partial<InternalConstants> };
/** The options after resolveOptions: every default filled in, origins canonical, and the internal constants (options/internals.ts). */
export type ResolvedOptions = Omit<Resolved<typeof pluginOptionsSchema>, 'logicalOrigin'> & { logicalOrigin: string } & InternalConstants;
export type CorsMode = ResolvedOptions['cors'];

const validator = compileOptions<Resolved<typeof pluginOptionsSchema>>(pluginOptionsSchema);

/**
 * Validates options and fills in defaults; throws WEBPP_ERR_BAD_OPTIONS naming every
 * problem. `name` says how the caller knows an option (the CLI passes flag names).
 */
export function resolveOptions(options: WebppOriginOptions, name: PathNamer = optionPath('options')): ResolvedOptions {
  const removed = removedOptionsProblem(options, (option) => name([option]));
  if (removed !== undefined) throw new WEBPP_ERR_BAD_OPTIONS(removed);
  const checked = validator.check(options, name);
  if (!checked.ok) throw new WEBPP_ERR_BAD_OPTIONS(checked.problems.join('; '));
  const resolved = checked.value;
  const publicUrl = originOnly(resolved.publicUrl, name(['publicUrl']));
  const peers = [...new Set(resolved.peers.map((peer, index) => originOnly(peer, `${name(['peers'])}[${index}]`)))].filter((peer) => peer !== publicUrl);
  if (peers.length > 0 && resolved.clusterSecret === undefined) {
    throw new WEBPP_ERR_BAD_OPTIONS(`${name(['clusterSecret'])} is required when peers are configured`);
  }
  for (const key of ['preFilters', 'postFilters'] as const) {
    if (!resolved[key].every((filter) => typeof filter === 'function')) throw new WEBPP_ERR_BAD_OPTIONS(`${name([key])} must be an array of functions`);
  }
  if (resolved.scriptPath === resolved.workerPath) throw new WEBPP_ERR_BAD_OPTIONS(`${name(['scriptPath'])} and ${name(['workerPath'])} must differ`);
  return {
    ...resolved,
    ...internalsOf(options),
    publicUrl,
    logicalOrigin: resolved.logicalOrigin === undefined ? publicUrl : originOnly(resolved.logicalOrigin, name(['logicalOrigin'])),
    peers,
    aliasUrls: resolved.aliasUrls.map((alias, index) => originOnly(alias, `${name(['aliasUrls'])}[${index}]`)),
    // Checked now, so that a bad batch option fails registration with the others.
    batch: resolved.batch === false ? false : resolveBatchOptions(resolved.batch, (path) => name(['batch', ...path])),
  };
}

/** "scheme://host[:port]" of an http(s) URL that has no path, query or credentials. */
function originOnly(value: string, name: string): string {
  const url = canonicalUrl(value);
  if (url === undefined) throw new WEBPP_ERR_BAD_OPTIONS(`${name} must be an http(s) URL (got ${JSON.stringify(value)})`);
  const parsed = new URL(url);
  if (parsed.pathname !== '/' || parsed.search !== '') {
    throw new WEBPP_ERR_BAD_OPTIONS(`${name} must be an origin without path or query (got ${JSON.stringify(value)})`);
  }
  return parsed.origin;
}
