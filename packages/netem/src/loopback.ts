/** The emulator talks to loopback only: these machines (and the tests) allow nothing else. */
import { isIP } from 'node:net';
import { NetemError } from './model/errors.js';

/** True for 127.0.0.0/8, ::1, "localhost" and any "*.localhost" name. */
export function isLoopbackHost(host: string): boolean {
  const bare = host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
  const lower = bare.toLowerCase();
  if (lower === 'localhost' || lower.endsWith('.localhost')) return true;
  if (isIP(lower) === 4) return lower.startsWith('127.');
  if (isIP(lower) === 6) return lower === '::1' || lower === '0:0:0:0:0:0:0:1';
  return false;
}

/** Parses and checks an upstream URL: http, loopback host, explicit or default port. */
export function parseUpstream(upstream: string | URL): URL {
  let url: URL;
  try {
    url = new URL(upstream);
  } catch (error) {
    throw new NetemError('WEBPP_ERR_NETEM_OPTIONS', `upstream is not a URL: ${String(upstream)}`, { cause: error });
  }
  if (url.protocol !== 'http:') throw new NetemError('WEBPP_ERR_NETEM_OPTIONS', `upstream must be an http: URL, got ${url.protocol}`);
  if (!isLoopbackHost(url.hostname)) {
    throw new NetemError('WEBPP_ERR_NETEM_NOT_LOOPBACK', `upstream must be a loopback address, got ${url.hostname}`);
  }
  return url;
}

export function assertLoopbackHost(host: string): void {
  if (!isLoopbackHost(host)) {
    throw new NetemError('WEBPP_ERR_NETEM_NOT_LOOPBACK', `the emulator listens on loopback only, got ${host}`);
  }
}
