import type { LaunchOptions } from '@playwright/test';

/** Debian's Chromium; Playwright cannot download its own browsers on these machines. */
const chromiumExecutablePath: string = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/** Flags measured in ../shared/GUIDE.md section 1: keep Chromium off the (closed) network. */
export const chromiumArgs: string[] = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
  '--disable-quic',
];

export const chromiumLaunchOptions: LaunchOptions = {
  executablePath: chromiumExecutablePath,
  args: chromiumArgs,
  headless: true,
};
