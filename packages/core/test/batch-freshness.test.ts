import { describe, expect, it } from 'vitest';
import { currentAgeMs, isFresh } from '../src/batch/freshness.js';
import { freshnessLifetimeMs, parseCacheControl, storability, validatorOf } from '../src/batch/index.js';

const headers = (init: Record<string, string>): Headers => new Headers(init);
const DATE = 'Mon, 01 Jan 2024 12:00:00 GMT';
const DATE_MS = Date.parse(DATE);

describe('logical-URL cache freshness (RFC 9111)', () => {
  it('parses Cache-Control directives, ignoring unknown ones and bad numbers', () => {
    expect(parseCacheControl('public, max-age=60, must-revalidate, x-ext="a,b"')).toMatchObject({
      maxAgeSeconds: 60,
      mustRevalidate: true,
      noStore: false,
    });
    expect(parseCacheControl('max-age=abc').maxAgeSeconds).toBeUndefined();
    expect(parseCacheControl('No-Store').noStore).toBe(true);
    expect(parseCacheControl('no-cache="set-cookie"').noCache).toBe(true);
    expect(parseCacheControl(null)).toEqual({ noStore: false, noCache: false, mustRevalidate: false, immutable: false });
  });

  it('takes the lifetime from max-age, then Expires, then the Last-Modified heuristic', () => {
    expect(freshnessLifetimeMs(headers({ 'cache-control': 'max-age=30', expires: 'Tue, 02 Jan 2024 12:00:00 GMT', date: DATE }))).toBe(30_000);
    expect(freshnessLifetimeMs(headers({ expires: 'Mon, 01 Jan 2024 12:05:00 GMT', date: DATE }))).toBe(300_000);
    expect(freshnessLifetimeMs(headers({ expires: '0', date: DATE }))).toBe(0);
    // Modified 10 hours before Date: 10% heuristic = 1 hour.
    expect(freshnessLifetimeMs(headers({ 'last-modified': 'Mon, 01 Jan 2024 02:00:00 GMT', date: DATE }))).toBe(3_600_000);
    // Capped at one day.
    expect(freshnessLifetimeMs(headers({ 'last-modified': 'Mon, 01 Jan 2000 00:00:00 GMT', date: DATE }))).toBe(86_400_000);
    expect(freshnessLifetimeMs(headers({}))).toBe(0);
  });

  it('counts the Age header and the time since storing', () => {
    expect(currentAgeMs(headers({ age: '10' }), DATE_MS, DATE_MS + 5_000)).toBe(15_000);
    expect(currentAgeMs(headers({ age: 'junk' }), DATE_MS, DATE_MS + 5_000)).toBe(5_000);
  });

  it('is fresh within max-age, stale after it, and never fresh with no-cache', () => {
    const h = headers({ 'cache-control': 'max-age=60' });
    expect(isFresh(h, DATE_MS, DATE_MS + 59_000)).toBe(true);
    expect(isFresh(h, DATE_MS, DATE_MS + 60_000)).toBe(false);
    expect(isFresh(headers({ 'cache-control': 'no-cache, max-age=60' }), DATE_MS, DATE_MS)).toBe(false);
    expect(isFresh(headers({}), DATE_MS, DATE_MS)).toBe(false);
  });

  it('stores only complete, URL-keyed, cookie-free 200 responses', () => {
    expect(storability(200, headers({ 'cache-control': 'max-age=60' }))).toEqual({ storable: true });
    expect(storability(200, headers({ vary: 'Accept-Encoding' }))).toEqual({ storable: true });
    expect(storability(206, headers({}))).toMatchObject({ storable: false });
    expect(storability(200, headers({ 'cache-control': 'private, no-store' }))).toMatchObject({ storable: false, reason: 'Cache-Control: no-store' });
    expect(storability(200, headers({ vary: 'Cookie' }))).toMatchObject({ storable: false });
    expect(storability(200, headers({ 'set-cookie': 'a=b' }))).toMatchObject({ storable: false });
  });

  it('uses the ETag as the validator', () => {
    expect(validatorOf(headers({ etag: 'W/"12-abc"' }))).toBe('W/"12-abc"');
    expect(validatorOf(headers({ 'last-modified': DATE }))).toBeUndefined();
  });
});
