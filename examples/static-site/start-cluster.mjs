#!/usr/bin/env node
// Starts the three replica servers of this example with the webpp-origin CLI, exactly as the
// README's three commands do, and stops them on Ctrl-C. Ports 7081-7083 (directory.json).
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';

const here = fileURLToPath(new URL('.', import.meta.url));
const cli = fileURLToPath(new URL('cli.js', import.meta.resolve('@webpp/origin')));
const servers = [
  { name: 'a', port: 7081 },
  { name: 'b', port: 7082 },
  { name: 'c', port: 7083 },
];
const origin = ({ name, port }) => `http://${name}.localhost:${port}`;
const env = {
  ...process.env,
  WEBPP_CLUSTER_SECRET: process.env.WEBPP_CLUSTER_SECRET ?? randomBytes(24).toString('base64url'),
  WEBPP_ADMIN_TOKEN: process.env.WEBPP_ADMIN_TOKEN ?? randomBytes(18).toString('base64url'),
};

const children = servers.map((server) =>
  spawn(
    process.execPath,
    [
      cli,
      'site',
      '--port', String(server.port),
      '--public-host', `${server.name}.localhost`,
      '--logical-origin', origin(servers[0]),
      '--directory', 'directory.json',
      '--data-dir', `.webpp-data/${server.name}`,
      '--peer', servers.filter((other) => other !== server).map(origin).join(','),
      '--log-level', 'warn',
    ],
    { cwd: here, env, stdio: 'inherit' },
  ),
);

console.log(`Harbor Docs on three replicas: open ${origin(servers[0])}/`);
console.log(`Admin token for the management API: ${env.WEBPP_ADMIN_TOKEN}`);
console.log('Press Ctrl-C to stop.');

let exited = 0;
for (const child of children) {
  child.on('exit', () => {
    exited += 1;
    if (exited === children.length) process.exit(0);
  });
}
const stop = () => children.forEach((child) => child.kill('SIGTERM'));
process.on('SIGINT', stop);
process.on('SIGTERM', stop);
