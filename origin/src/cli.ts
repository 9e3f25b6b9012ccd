#!/usr/bin/env node
/**
 * webpp-origin: a Web++ replica server (paper Section 5) over a folder of files, or in
 * front of an existing web server (proxy mode). Run `webpp-origin --help`.
 */
import { readFileSync, realpathSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { startReplicaServer, type ReplicaServerOptions } from './server.js';
import { runBuildCommand } from './build/build-cli.js';

export const HELP = `Usage: webpp-origin [options] [root]
       webpp-origin build <in-dir> --out <out-dir> --directory <file> [--inject]

Runs a webpp (Web++) replica server: serves a folder (or proxies a web server),
adds replica bindings to every response, keeps the replication directory in sync
with its peers, and accepts replica management calls.

Content
  [root], --root <dir>          Folder to serve (static files, index.html for folders).
  --proxy-upstream <url>        Proxy mode: forward requests to this web server instead of
                                serving a folder; its HTML and CSS are pre-processed too.

Network
  --port <n>                    Port to listen on (default 8080, or $PORT; 0 = any free port).
  --host <address>              Address to listen on (default 127.0.0.1).
  --public-url <url>            This server's public origin, as browsers and peers reach it
                                (default http://<public host>:<port>).
  --public-host <name>          Host name for the default public URL (default: --host).
  --logical-origin <url>        Origin of logical URLs given as paths (management API,
                                directory file). Default: the public URL.

HTTPS and HTTP/2
  --tls-cert <file>             PEM certificate chain: serve HTTPS, with HTTP/2 and HTTP/1.1
                                (ALPN). Needs --tls-key. Reloaded when the file changes or on
                                SIGHUP; a reload that fails keeps the current certificate.
  --tls-key <file>              PEM private key of --tls-cert.
                                Peers with a private CA: start with NODE_EXTRA_CA_CERTS=<ca.pem>.

Replication
  --peer <url>                  Public URL of another server of this administrative domain.
                                Repeat the option, or give a comma-separated list.
  --alias-url <url>             Another origin at which peers reach this server (an internal
                                address); signed peer calls addressed to it are accepted too.
                                Repeat the option, or give a comma-separated list.
  --directory <file>            Directory file (JSON) seeding the replication directory;
                                format in docs/origin.md. Re-applied as a diff when it changes.
  --data-dir <dir>              Where the directory and stored replicas persist
                                (default ./.webpp-data).
  --sync-interval-ms <n>        Anti-entropy period between peers (default 10000).

Credentials (prefer the environment variables: arguments are visible in ps)
  --admin-token <token>         Bearer token for the management API and statistics
                                ($WEBPP_ADMIN_TOKEN). Without it management is disabled.
  --cluster-secret <secret>     Shared secret signing server-to-server calls
                                ($WEBPP_CLUSTER_SECRET). Required with --peer.
  --admin-token-file <file>     Read the admin token from a file.
  --cluster-secret-file <file>  Read the cluster secret from a file.

Behaviour
  --no-inject                   Do not insert <script src="/webpp.js"> into HTML pages.
  --cors <mode>                 replicated (default) | all | off: CORS on GET/HEAD responses.
  --kill-switch                 Send "webpp-control: off": every browser's worker unregisters.
  --content-digests             Send SHA-256 digests of the site's files in the bindings header.
  --public-stats                Serve /.well-known/webpp/stats without the admin token.
  --batch                       Batch transmission: answer a worker's page request with the page
                                and its embedded resources in one streamed response (docs/batching.md).
  --max-replica-bytes <n>       Largest replica accepted by POST/PUT (default 52428800).
  --client-bundle-dir <dir>     Folder with webpp.js and webpp-sw.js (default: @webpp/sw bundle).
  --log-level <level>           fatal | error | warn | info (default) | debug | trace | silent.
  -h, --help                    Show this help.

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

class UsageError extends Error {}

function integer(value: string | undefined, name: string): number | undefined {
  if (value === undefined) return undefined;
  if (!/^\d+$/.test(value)) throw new UsageError(`--${name} must be a non-negative integer (got ${JSON.stringify(value)})`);
  return Number(value);
}

function secret(direct: string | undefined, file: string | undefined, envName: string, name: string): string | undefined {
  if (direct !== undefined && file !== undefined) throw new UsageError(`give --${name} or --${name}-file, not both`);
  if (file !== undefined) {
    try {
      return readFileSync(file, 'utf8').trim();
    } catch (error) {
      throw new UsageError(`cannot read --${name}-file ${file}: ${(error as Error).message}`);
    }
  }
  const fromEnv = process.env[envName];
  return direct ?? (fromEnv === undefined || fromEnv === '' ? undefined : fromEnv);
}

/** Parses argv (without node and script) into server options; throws UsageError on bad input. */
export function parseCli(argv: string[]): { help: true } | { help: false; options: ReplicaServerOptions; logLevel: string } {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    strict: true,
    options: {
      root: { type: 'string' },
      'proxy-upstream': { type: 'string' },
      port: { type: 'string' },
      host: { type: 'string' },
      'public-url': { type: 'string' },
      'public-host': { type: 'string' },
      'logical-origin': { type: 'string' },
      'tls-cert': { type: 'string' },
      'tls-key': { type: 'string' },
      peer: { type: 'string', multiple: true },
      'alias-url': { type: 'string', multiple: true },
      directory: { type: 'string' },
      'data-dir': { type: 'string' },
      'sync-interval-ms': { type: 'string' },
      'admin-token': { type: 'string' },
      'admin-token-file': { type: 'string' },
      'cluster-secret': { type: 'string' },
      'cluster-secret-file': { type: 'string' },
      'no-inject': { type: 'boolean' },
      cors: { type: 'string' },
      'kill-switch': { type: 'boolean' },
      'content-digests': { type: 'boolean' },
      'public-stats': { type: 'boolean' },
      batch: { type: 'boolean' },
      'max-replica-bytes': { type: 'string' },
      'client-bundle-dir': { type: 'string' },
      'log-level': { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help === true) return { help: true };
  if (positionals.length > 1) throw new UsageError(`expected at most one root folder, got ${positionals.join(' ')}`);
  if (positionals.length === 1 && values.root !== undefined) throw new UsageError('give the root folder once (positional or --root)');
  const root = values.root ?? positionals[0];
  const proxyUpstream = values['proxy-upstream'];
  if (root === undefined && proxyUpstream === undefined) throw new UsageError('give a root folder to serve, or --proxy-upstream <url>');
  if (root !== undefined && proxyUpstream !== undefined) throw new UsageError('a root folder and --proxy-upstream are exclusive');
  const cors = values.cors;
  if (cors !== undefined && cors !== 'replicated' && cors !== 'all' && cors !== 'off') {
    throw new UsageError(`--cors must be replicated, all or off (got ${JSON.stringify(cors)})`);
  }
  const logLevel = values['log-level'] ?? 'info';
  if (!['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'].includes(logLevel)) {
    throw new UsageError(`--log-level must be fatal, error, warn, info, debug, trace or silent (got ${logLevel})`);
  }
  const port = integer(values.port ?? process.env.PORT, 'port') ?? 8080;
  if (port > 65_535) throw new UsageError(`--port must be at most 65535 (got ${port})`);
  const tlsCert = values['tls-cert'];
  const tlsKey = values['tls-key'];
  if ((tlsCert === undefined) !== (tlsKey === undefined)) throw new UsageError('give --tls-cert and --tls-key together');
  const peers = (values.peer ?? []).flatMap((peer) => peer.split(',')).map((peer) => peer.trim()).filter((peer) => peer !== '');
  const aliasUrls = (values['alias-url'] ?? []).flatMap((alias) => alias.split(',')).map((alias) => alias.trim()).filter((alias) => alias !== '');
  const options: ReplicaServerOptions = {
    port,
    host: values.host ?? '127.0.0.1',
    dataDir: values['data-dir'] ?? '.webpp-data',
    peers,
    injectScript: values['no-inject'] !== true,
    killSwitch: values['kill-switch'] === true,
    contentDigests: values['content-digests'] === true,
    publicStats: values['public-stats'] === true,
    batch: values.batch === true,
  };
  const optional: Partial<ReplicaServerOptions> = {
    root,
    proxyUpstream,
    publicUrl: values['public-url'],
    publicHost: values['public-host'],
    logicalOrigin: values['logical-origin'],
    aliasUrls: aliasUrls.length > 0 ? aliasUrls : undefined,
    directoryFile: values.directory,
    syncIntervalMs: integer(values['sync-interval-ms'], 'sync-interval-ms'),
    maxReplicaBytes: integer(values['max-replica-bytes'], 'max-replica-bytes'),
    clientBundleDir: values['client-bundle-dir'],
    cors,
    tls: tlsCert !== undefined && tlsKey !== undefined ? { certFile: tlsCert, keyFile: tlsKey } : undefined,
    adminToken: secret(values['admin-token'], values['admin-token-file'], 'WEBPP_ADMIN_TOKEN', 'admin-token'),
    clusterSecret: secret(values['cluster-secret'], values['cluster-secret-file'], 'WEBPP_CLUSTER_SECRET', 'cluster-secret'),
  };
  for (const [key, value] of Object.entries(optional)) {
    if (value !== undefined) (options as Record<string, unknown>)[key] = value;
  }
  return { help: false, options, logLevel };
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
  let parsed;
  try {
    parsed = parseCli(argv);
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
    const code = (error as { code?: string }).code;
    process.stderr.write(`webpp-origin: ${code !== undefined ? `${code}: ` : ''}${(error as Error).message}\n`);
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
