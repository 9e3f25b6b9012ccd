import { defineConfig } from '@playwright/test';
import { chromiumLaunchOptions } from './support/chromium.js';

export default defineConfig({
  testDir: './tests',
  // Two cores: one browser at a time keeps timings sane and tests deterministic.
  workers: 1,
  fullyParallel: false,
  retries: 0,
  timeout: 90_000,
  expect: { timeout: 15_000 },
  reporter: process.env.CI ? [['list']] : [['list']],
  use: {
    browserName: 'chromium',
    launchOptions: chromiumLaunchOptions,
    serviceWorkers: 'allow',
  },
});
