/**
 * The paths of webpp's own endpoints that both a server and the worker use: one constant
 * each, so that the origin and the worker cannot drift apart.
 */

/** The tree of a server's webpp endpoints (management, peers, name service, health, statistics). */
export const WELL_KNOWN_PREFIX = '/.well-known/webpp/';

/** The static bindings file: written by `webpp-origin build`, read by the worker (docs/protocol.md). */
export const STATIC_BINDINGS_PATH = `${WELL_KNOWN_PREFIX}bindings`;

/** Where a worker posts its own measurements for the client aggregate (push/aggregate-header.ts). */
export const CLIENT_REPORT_PATH = `${WELL_KNOWN_PREFIX}client-reports`;
