#!/usr/bin/env node
// Makes sure Debian's Chromium is present for the Playwright tests (Playwright cannot
// download its own browsers on these machines). Installs it with apt when running as
// root; otherwise stops with a message that says how.
import { accessSync, constants } from 'node:fs';
import { execFileSync } from 'node:child_process';

const chromiumPath = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

function isExecutable(path) {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

if (isExecutable(chromiumPath)) process.exit(0);

const isRoot = typeof process.getuid === 'function' && process.getuid() === 0;
if (process.env.CHROMIUM_PATH || !isRoot) {
  console.error(
    `Chromium was not found at ${chromiumPath}.\n` +
      'Install Debian\'s Chromium with:  sudo apt-get update && sudo apt-get install -y chromium\n' +
      'or point CHROMIUM_PATH at a Chromium binary.',
  );
  process.exit(1);
}

console.log('Chromium is missing: installing Debian\'s chromium package with apt-get…');
const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
execFileSync('apt-get', ['update'], { stdio: 'inherit', env });
execFileSync('apt-get', ['install', '-y', 'chromium'], { stdio: 'inherit', env });
if (!isExecutable(chromiumPath)) {
  console.error(`apt-get finished but ${chromiumPath} is still missing.`);
  process.exit(1);
}
