/**
 * Same-origin requests without bindings (navigations, fetch(), stylesheets): fetched as they
 * are, only to read their bindings header (or, from a static host, the static bindings
 * file). When the site's origin fails, a saved copy answers (offline-cache.ts).
 */
import { BINDINGS_HEADER, CONTROL_HEADER } from '@webpp/core';
import type { RespondIO } from './plugins.js';
import type { HeaderLearning } from './header-learning.js';
import type { OfflineCopies } from './offline-copies.js';
import type { StateReporter } from './state-reporter.js';

export interface ObserveStageOptions {
  reporter: StateReporter;
  headers: HeaderLearning;
  offline: OfflineCopies;
  /** The answer had nothing to learn (no webpp header): the router may pass its URL on for a while (route.ts). */
  quiet?(request: Request): void;
}

export async function observeRequest(request: Request, io: RespondIO, options: ObserveStageOptions): Promise<Response> {
  const { reporter, headers, offline } = options;
  const waitUntil = (promise: Promise<unknown>): void => io.waitUntil(promise);
  reporter.count('observed');
  let response: Response;
  try {
    response = await io.fetch(request);
  } catch {
    return (await offline.rescue(request, request.url)) ?? Response.error();
  }
  const offlineCopy = response.status >= 500 ? await offline.rescue(request, request.url) : undefined;
  if (offlineCopy) return (void response.body?.cancel().catch(() => undefined), offlineCopy);
  if (response.type === 'basic' || response.type === 'default') {
    headers.learnFrom(response, request.url, waitUntil);
    if (response.ok && !response.headers.has(BINDINGS_HEADER) && !response.headers.has(CONTROL_HEADER)) options.quiet?.(request);
    // A static host sends no header: its bindings are in the static bindings file (static-bindings.ts).
    if (response.ok && !response.headers.has(BINDINGS_HEADER)) await headers.learnStaticBindings(waitUntil);
  }
  return offline.keep(request, request.url, response, waitUntil);
}
