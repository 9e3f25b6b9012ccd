#!/usr/bin/env node
/**
 * webpp-origin: a Web++ replica server (paper Section 5) over a folder of files, or in
 * front of an existing web server (proxy mode). Run `webpp-origin --help`.
 */
import { realpathSync, statSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { startReplicaServer, type ReplicaServerOptions } from './server.js';
import { runBuildCommand } from './build/build-cli.js';
import { runCheckCommand } from './check/check-cli.js';
import { helpSections } from './options/cli-flags.js';
import { parseFlags, UsageError } from './options/parse-flags.js';

const USAGE = `Usage: webpp-origin [options] [root]
       webpp-origin check <page url>
       webpp-origin build <in-dir> --out <out-dir> --directory <file> [--inject]

Runs a webpp (Web++) replica server: serves a folder (or proxies a web server),
adds replica bindings to every response, keeps the replication directory in sync
with its peers, and accepts replica management calls.

Example: one site on two servers, a (where visitors go) and b (a replica)
  export WEBPP_ADMIN_TOKEN=… WEBPP_CLUSTER_SECRET=…
  webpp-origin ./site --port 8081 --public-host a.localhost --directory directory.json \\
    --data-dir .webpp-data/a --peer http://b.localhost:8082
  webpp-origin ./site --port 8082 --public-host b.localhost --directory directory.json \\
    --data-dir .webpp-data/b --peer http://a.localhost:8081
  webpp-origin check http://a.localhost:8081/
directory.json names the logical origin ("logicalOrigin": "http://a.localhost:8081") and
which files live where (docs/origin.md, "Directory file").
`;

const TRAILER = `
  -h, --help                    Show this help.

Checking a deployment
  check <page url>              Fetch the page and its bindings, request every replica as the
                                browser's worker would, and say per replica what stops it being
                                used (CORS, Timing-Allow-Origin, status, digest, redirect, clock,
                                cache headers). Exit 1 when a replica is unusable.

Static hosting
  build <in-dir> --out <dir> --directory <file> [--inject]
                                Pre-process a folder for a static host: _headers, the static
                                bindings file, webpp.js and webpp-sw.js (docs/static-hosting.md).
                                Run "webpp-origin build --help" for its options.

Endpoints (all under /.well-known/webpp/): resolve?url=, directory, health, stats, metrics,
replicas/<path> (POST create, PUT update, DELETE remove; Authorization: Bearer <admin token>).
The server exits cleanly on SIGINT and SIGTERM; SIGHUP reloads the TLS certificate and key
(without TLS it is logged and ignored).
`;

/** The text of `webpp-origin --help`: the flags come from the option schemas (options/cli-flags.ts). */
export const HELP = `${USAGE}\n${helpSections()}${TRAILER}`;

/** Parses argv (without node and script) into server options; throws UsageError on bad input. */
export function parseCli(argv: string[], env: NodeJS.ProcessEnv = process.env): { help: true } | { help: false; options: ReplicaServerOptions; logLevel: string } {
  const parsed = parseFlags(argv, env);
  if (parsed.help) return { help: true };
  const { positionals } = parsed;
  const options = parsed.server as ReplicaServerOptions;
  if (positionals.length > 1) throw new UsageError(`expected at most one root folder, got ${positionals.join(' ')}`);
  if (positionals.length === 1 && options.root !== undefined) throw new UsageError('give the root folder once (positional or --root)');
  if (positionals.length === 1) options.root = positionals[0];
  if (options.root === undefined && options.proxyUpstream === undefined) throw new UsageError('give a root folder to serve, or --proxy-upstream <url>');
  if (options.root !== undefined && options.proxyUpstream !== undefined) throw new UsageError('a root folder and --proxy-upstream are exclusive');
  const { tlsCert, tlsKey, logLevel } = parsed.cli as { tlsCert?: string; tlsKey?: string; logLevel?: string };
  if ((tlsCert === undefined) !== (tlsKey === undefined)) throw new UsageError('give --tls-cert and --tls-key together');
  if (tlsCert !== undefined && tlsKey !== undefined) options.tls = { certFile: tlsCert, keyFile: tlsKey };
  return { help: false, options, logLevel: logLevel ?? 'info' };
}

/**
 * A root folder that does not exist is a typo, not a site: @fastify/static only logs a
 * warning and the server would answer 404 to everything, so the command stops first.
 */
function checkRootFolder(root: string | undefined): void {
  if (root === undefined) return;
  let isFolder = false;
  try {
    isFolder = statSync(root).isDirectory();
  } catch {
    // missing or unreadable: reported below
  }
  if (!isFolder) throw new UsageError(`the root folder ${root} does not exist or is not a folder`);
}

/** One line for an error that stopped the start: its code once, and for a taken port what to do. */
function startFailureMessage(error: unknown): string {
  const { code, port, address } = error as { code?: string; port?: number; address?: string };
  if (code === 'EADDRINUSE') {
    const where = address === undefined ? `port ${port ?? '?'}` : `${address}:${port ?? '?'}`;
    return `EADDRINUSE: ${where} is already in use by another process. Stop that process, or choose another --port (--port 0 picks a free one).`;
  }
  const message = (error as Error).message;
  return code !== undefined && !message.startsWith(code) ? `${code}: ${message}` : message;
}

const SHUTDOWN_TIMEOUT_MS = 10_000;
/** More uncaught errors than this within UNCAUGHT_WINDOW_MS means the process is broken: exit so a supervisor restarts it. */
const MAX_UNCAUGHT_PER_WINDOW = 20;
const UNCAUGHT_WINDOW_MS = 10_000;

/**
 * An error that escapes every handler (a stream 'error' nobody listens to, a rejected
 * promise nobody awaits) is logged and the server keeps serving: one bad request must not
 * take a replica down. A burst of them (a real bug in a loop) still ends the process.
 */
function keepRunningOnUncaughtErrors(log: { error(object: object, message: string): void; fatal(object: object, message: string): void }): void {
  const recentMs: number[] = [];
  const onError = (kind: string) => (error: unknown) => {
    const nowMs = Date.now();
    recentMs.push(nowMs);
    while (recentMs.length > 0 && (recentMs[0] as number) < nowMs - UNCAUGHT_WINDOW_MS) recentMs.shift();
    if (recentMs.length > MAX_UNCAUGHT_PER_WINDOW) {
      log.fatal({ err: error, kind }, `more than ${MAX_UNCAUGHT_PER_WINDOW} uncaught errors in ${UNCAUGHT_WINDOW_MS} ms: exiting`);
      process.exit(70);
    }
    log.error({ err: error, kind }, 'uncaught error: logged, server keeps running');
  };
  process.on('uncaughtException', onError('uncaughtException'));
  process.on('unhandledRejection', onError('unhandledRejection'));
}

export async function main(argv: string[]): Promise<void> {
  if (argv[0] === 'build') return runBuildCommand(argv.slice(1));
  if (argv[0] === 'check') return runCheckCommand(argv.slice(1));
  let parsed;
  try {
    parsed = parseCli(argv);
    if (!parsed.help) checkRootFolder(parsed.options.root);
  } catch (error) {
    process.stderr.write(`webpp-origin: ${(error as Error).message}\nRun "webpp-origin --help" for usage.\n`);
    process.exitCode = 2;
    return;
  }
  if (parsed.help) {
    process.stdout.write(HELP);
    return;
  }
  let server;
  try {
    server = await startReplicaServer({ ...parsed.options, logger: { level: parsed.logLevel } });
  } catch (error) {
    process.stderr.write(`webpp-origin: ${startFailureMessage(error)}\n`);
    process.exitCode = 1;
    return;
  }
  const running = server;
  keepRunningOnUncaughtErrors(running.app.log);
  let closing = false;
  const shutdown = (signal: NodeJS.Signals): void => {
    if (closing) {
      running.app.log.warn({ signal }, 'second signal: exiting at once');
      process.exit(1);
    }
    closing = true;
    running.app.log.info({ signal }, 'webpp-origin shutting down');
    const timer = setTimeout(() => {
      running.app.log.error('shutdown timed out');
      process.exit(1);
    }, SHUTDOWN_TIMEOUT_MS);
    timer.unref();
    running.close().then(
      () => {
        running.app.log.info('webpp-origin stopped');
        process.exit(0);
      },
      (error: unknown) => {
        running.app.log.error({ err: error }, 'error while shutting down');
        process.exit(1);
      },
    );
  };
  process.on('SIGINT', shutdown);
  process.on('SIGTERM', shutdown);
  // SIGHUP: the operator renewed the certificate (logrotate-style); reload() logs the outcome.
  const reloadTls = running.reloadTls;
  // Without TLS there is nothing to reload, but a HUP (a logrotate script) must not end the process.
  process.on('SIGHUP', () => {
    if (reloadTls !== undefined) reloadTls('SIGHUP');
    else running.app.log.info('SIGHUP: no TLS certificate to reload');
  });
}

/** True when this file is the program being run (not imported by a test). */
function isEntryPoint(): boolean {
  const script = process.argv[1];
  if (script === undefined) return false;
  try {
    return realpathSync(script) === realpathSync(fileURLToPath(import.meta.url));
  } catch {
    return false;
  }
}

if (isEntryPoint()) await main(process.argv.slice(2));
