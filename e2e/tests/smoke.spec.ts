import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { test, expect } from '@playwright/test';

let server: Server;
let baseUrl: string;

test.beforeAll(async () => {
  server = createServer((request, response) => {
    response.setHeader('content-type', 'text/html; charset=utf-8');
    response.end('<!doctype html><title>webpp smoke</title><h1 id="greeting">served over loopback</h1>');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://localhost:${(server.address() as AddressInfo).port}/`;
});

test.afterAll(async () => {
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

test('Chromium opens a page served on loopback and sees a secure context', async ({ page }) => {
  await page.goto(baseUrl);
  await expect(page).toHaveTitle('webpp smoke');
  await expect(page.locator('#greeting')).toHaveText('served over loopback');
  // Service workers need a secure context; http://localhost must count as one.
  expect(await page.evaluate(() => window.isSecureContext)).toBe(true);
  expect(await page.evaluate(() => 'serviceWorker' in navigator)).toBe(true);
});
