/**
 * What the response plugins ask of a request URL before doing anything: is it one of the
 * origin's own endpoints, and what is its path.
 */
import type { ResolvedOptions } from '../options.js';
import { WELL_KNOWN_PREFIX } from '@webpp/core';

/** The request URL without its query (no parsing: the hot path). */
export function pathWithoutQuery(url: string): string {
  const queryStart = url.indexOf('?');
  return queryStart < 0 ? url : url.slice(0, queryStart);
}

/** The canonical path of a request URL (no query), or undefined if it does not parse. */
export function requestPath(url: string): string | undefined {
  try {
    return new URL(url, 'http://webpp.invalid').pathname;
  } catch {
    return undefined;
  }
}

/** Whether a request URL is under /.well-known/webpp/ (the origin's own endpoints). */
export function isWellKnown(url: string): boolean {
  return url.startsWith(WELL_KNOWN_PREFIX);
}

/**
 * A test for the URLs the origin answers itself: /.well-known/webpp/ and, when it serves
 * them, the client scripts and their source maps. Their responses get no binding and no CORS.
 */
export function ownEndpointTest(options: Pick<ResolvedOptions, 'serveClientScripts' | 'scriptPath' | 'workerPath'>): (url: string) => boolean {
  const clientScriptPaths = new Set([options.scriptPath, options.workerPath].flatMap((path) => [path, `${path}.map`]));
  return (url) => isWellKnown(url) || (options.serveClientScripts && clientScriptPaths.has(pathWithoutQuery(url)));
}
