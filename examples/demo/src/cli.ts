#!/usr/bin/env node
/**
 * `npm start`: the webpp demo. Starts three replica servers of the gallery on loopback
 * (a.localhost, b.localhost, c.localhost), each behind an emulated link, and prints where
 * to look. Ctrl-C stops everything.
 */
import { parseArgs } from 'node:util';
import { DEFAULT_CONTROL_PORT, DEFAULT_REPLICA_PORTS, startDemo, type RunningDemo } from './cluster/demo-cluster.js';
import type { SiteLogLevel } from './cluster/site-app.js';

const HELP = `webpp demo: a photo gallery replicated on three emulated-distance servers.

Usage: npm start [-- options]
       node examples/demo/dist/cli.js [options]

Options:
  --ports A,B,C         public ports of replicas a, b, c (default ${DEFAULT_REPLICA_PORTS.join(',')}; 0 = any free port)
  --control-port PORT   port of the dashboard's control endpoint (default ${DEFAULT_CONTROL_PORT}; 0 = any)
  --admin-token TOKEN   bearer token of the replicas' management API (default: random per run;
                        also WEBPP_ADMIN_TOKEN)
  --log-level LEVEL     replica server log level: silent, error, warn, info, debug (default warn)
  -h, --help            show this help

Environment: WEBPP_DEMO_PORTS and WEBPP_DEMO_CONTROL_PORT set the same defaults.
`;

/** A second signal this long after the first forces the exit. */
const FORCE_EXIT_AFTER_MS = 2000;

function parsePort(text: string, what: string): number {
  const port = Number(text);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error(`${what} must be a port number 0-65535 (got "${text}")`);
  return port;
}

interface CliOptions {
  replicaPorts: number[];
  controlPort: number;
  logLevel: SiteLogLevel;
  adminToken?: string;
}

function parseOptions(argv: string[]): CliOptions | undefined {
  const { values } = parseArgs({
    args: argv,
    options: {
      ports: { type: 'string' },
      'control-port': { type: 'string' },
      'log-level': { type: 'string' },
      'admin-token': { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
    strict: true,
  });
  if (values.help) return undefined;
  const portsText = values.ports ?? process.env.WEBPP_DEMO_PORTS ?? DEFAULT_REPLICA_PORTS.join(',');
  const replicaPorts = portsText.split(',').map((part) => parsePort(part.trim(), '--ports'));
  if (replicaPorts.length !== 3) throw new Error(`--ports needs three ports, one per replica (got "${portsText}")`);
  const nonZero = replicaPorts.filter((port) => port !== 0);
  if (new Set(nonZero).size !== nonZero.length) throw new Error(`--ports must be distinct (got "${portsText}")`);
  const controlPort = parsePort(values['control-port'] ?? process.env.WEBPP_DEMO_CONTROL_PORT ?? String(DEFAULT_CONTROL_PORT), '--control-port');
  const logLevel = (values['log-level'] ?? 'warn') as SiteLogLevel;
  if (!['fatal', 'error', 'warn', 'info', 'debug', 'silent'].includes(logLevel)) throw new Error(`--log-level must be silent, error, warn, info or debug (got "${logLevel}")`);
  const adminToken = values['admin-token'] ?? process.env.WEBPP_ADMIN_TOKEN;
  if (adminToken !== undefined && !/^[\x21-\x7e]{16,4096}$/.test(adminToken)) throw new Error('--admin-token must be 16 or more printable ASCII characters without spaces');
  return { replicaPorts, controlPort, logLevel, ...(adminToken !== undefined ? { adminToken } : {}) };
}

function banner(demo: RunningDemo): string {
  const lines = [
    '',
    '  webpp demo is running: one gallery, three replica servers on loopback.',
    '',
    ...demo.replicas.map((replica) => {
      const view = replica.view();
      return `    ${view.id.toUpperCase()}  ${view.server.padEnd(26)} ${view.title.padEnd(27)} ${view.linkDescription}`;
    }),
    '',
    `  Open the gallery:    ${demo.galleryUrl}`,
    `  Open the dashboard:  ${demo.dashboardUrl}`,
    '',
    `  Replica management (POST, PUT, DELETE): Authorization: Bearer ${demo.adminToken}`,
    // With its content type: without one, curl sends application/x-www-form-urlencoded, and the replica is served as that.
    `    e.g. curl -X POST --data-binary @notes.txt -H 'content-type: text/plain' -H 'authorization: Bearer ${demo.adminToken}' \\`,
    `         ${demo.replicas[0]?.publicOrigin ?? ''}/.well-known/webpp/replicas/notes.txt`,
    '',
    '  (Chromium, Chrome, Edge and Firefox resolve *.localhost to this machine.)',
    '  Press Ctrl-C to stop.',
    '',
  ];
  return lines.join('\n');
}

async function main(): Promise<void> {
  let options;
  try {
    options = parseOptions(process.argv.slice(2));
  } catch (error) {
    console.error(`webpp demo: ${error instanceof Error ? error.message : String(error)}\n\n${HELP}`);
    process.exit(2);
  }
  if (!options) {
    console.log(HELP);
    return;
  }

  let demo: RunningDemo;
  try {
    demo = await startDemo(options);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const hint = code === 'EADDRINUSE' ? '\n  A port is taken: pass other ones, e.g. npm start -- --ports 9081,9082,9083 --control-port 9080' : '';
    console.error(`webpp demo could not start: ${error instanceof Error ? error.message : String(error)}${hint}`);
    process.exit(1);
  }
  console.log(banner(demo));

  let stoppingSinceMs = 0;
  const stop = (signal: string): void => {
    if (stoppingSinceMs > 0) {
      // npm passes the terminal's Ctrl-C on as well: only a later, second Ctrl-C forces the exit.
      if (Date.now() - stoppingSinceMs < FORCE_EXIT_AFTER_MS) return;
      console.log('\nwebpp demo: forced exit.');
      process.exit(130);
    }
    stoppingSinceMs = Date.now();
    console.log(`\nwebpp demo: ${signal} received, stopping the replica servers…`);
    demo.close().then(
      () => {
        console.log('webpp demo: stopped.');
        process.exit(0);
      },
      (error: unknown) => {
        console.error('webpp demo: error while stopping:', error);
        process.exit(1);
      },
    );
  };
  process.on('SIGINT', () => stop('Ctrl-C'));
  process.on('SIGTERM', () => stop('SIGTERM'));
}

await main();
