#!/usr/bin/env node
// `npm start` at the repository root: makes a fresh clone runnable, then starts the demo.
//   1. installs the locked dependencies when node_modules is missing (npm ci);
//   2. builds the packages (npm run build: tsc -b + the worker bundle) and the demo itself;
//   3. runs the demo launcher in this process, passing the command-line arguments on.
// Usage: npm start [-- --ports 8081,8082,8083 --control-port 8080]
import { existsSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = fileURLToPath(new URL('../../../', import.meta.url));
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';

function run(command, args, what) {
  console.log(`webpp demo: ${what}…`);
  const result = spawnSync(command, args, { cwd: root, stdio: 'inherit' });
  if (result.status !== 0) {
    console.error(`webpp demo: "${command} ${args.join(' ')}" failed (${result.error?.message ?? `exit ${result.status}`}).`);
    process.exit(result.status ?? 1);
  }
}

if (!existsSync(join(root, 'node_modules', '.package-lock.json'))) {
  run(npm, ['ci', '--no-audit', '--no-fund'], 'installing dependencies (first run)');
}
run(npm, ['run', '--silent', 'build'], 'building');
// The demo is its own TypeScript project; incremental, so a no-op when up to date.
run(process.execPath, [join(root, 'node_modules', 'typescript', 'bin', 'tsc'), '-b', join(root, 'examples', 'demo')], 'building the demo');

await import(pathToFileURL(join(root, 'examples', 'demo', 'dist', 'cli.js')).href);
