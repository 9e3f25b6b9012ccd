#!/usr/bin/env node
// A web server that knows nothing of webpp: plain node:http, a hand-rolled router, a page
// rendered per request and a folder of assets. `node legacy-server.js [port]` (default 7280).
import http from 'node:http';
import { readFile } from 'node:fs/promises';
import { extname, join, normalize } from 'node:path';
import { fileURLToPath } from 'node:url';

const siteDir = fileURLToPath(new URL('./legacy-site/', import.meta.url));
const TYPES = { '.css': 'text/css; charset=utf-8', '.svg': 'image/svg+xml', '.js': 'text/javascript; charset=utf-8' };

function forecastPage() {
  const days = ['Mon', 'Tue', 'Wed', 'Thu', 'Fri'];
  const icons = ['sun', 'cloud', 'rain', 'cloud', 'sun'];
  const cells = days
    .map((day, index) => `<li><img src="/assets/${icons[index]}.svg" width="48" height="48" alt="${icons[index]}"><strong>${day}</strong><span>${14 + index}°</span></li>`)
    .join('');
  return `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>Old Town Weather</title><link rel="stylesheet" href="/assets/weather.css"></head>
<body>
  <h1>Old Town Weather</h1>
  <p>Five-day forecast, rendered ${new Date().toUTCString()}.</p>
  <ul class="forecast">${cells}</ul>
  <script src="/assets/clock.js"></script>
</body>
</html>`;
}

export function createLegacyServer() {
  return http.createServer(async (request, response) => {
    const path = new URL(request.url ?? '/', 'http://legacy').pathname;
    if (request.method !== 'GET' && request.method !== 'HEAD') {
      response.writeHead(405, { allow: 'GET, HEAD' }).end();
      return;
    }
    if (path === '/' || path === '/index.html') {
      response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(request.method === 'HEAD' ? undefined : forecastPage());
      return;
    }
    const file = normalize(join(siteDir, path));
    if (!path.startsWith('/assets/') || !file.startsWith(siteDir)) {
      response.writeHead(404, { 'content-type': 'text/plain' }).end('not found');
      return;
    }
    try {
      const body = await readFile(file);
      response.writeHead(200, { 'content-type': TYPES[extname(file)] ?? 'application/octet-stream', 'content-length': body.length });
      response.end(request.method === 'HEAD' ? undefined : body);
    } catch {
      response.writeHead(404, { 'content-type': 'text/plain' }).end('not found');
    }
  });
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const port = Number(process.argv[2] ?? 7280);
  const server = createLegacyServer().listen(port, '127.0.0.1', () => console.log(`legacy server on http://127.0.0.1:${port}/`));
  process.on('SIGINT', () => server.close(() => process.exit(0)));
  process.on('SIGTERM', () => server.close(() => process.exit(0)));
}
