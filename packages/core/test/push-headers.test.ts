/** The wire format of server push (push/push-headers.ts, docs/protocol.md "Server push"). */
import { describe, expect, it } from 'vitest';
import { formatLoadHeader, formatServerTiming, parseLoadHeader, parseServerTiming } from '@webpp/core';

describe('Server-Timing: webpp;dur', () => {
  it('round-trips a service time at 0.1 ms', () => {
    expect(formatServerTiming(12.46)).toBe('webpp;dur=12.5');
    expect(parseServerTiming(formatServerTiming(12.46))).toBe(12.5);
  });

  it('finds the webpp metric among others and ignores what it does not know', () => {
    expect(parseServerTiming('cache;desc="hit, cold", db;dur=53, webpp;desc="x";dur=7')).toBe(7);
    expect(parseServerTiming('db;dur=53')).toBeUndefined();
    expect(parseServerTiming('webpp;dur=-3')).toBeUndefined();
    expect(parseServerTiming('webpp;dur=1e9')).toBeUndefined();
    expect(parseServerTiming('webpp;dur=99999999999')).toBeUndefined();
    expect(parseServerTiming(null)).toBeUndefined();
  });
});

describe('webpp-load', () => {
  it('round-trips peers with their values and ages', () => {
    const loads = [
      { server: 'http://b.localhost:8082', serviceMs: 8.14, ageMs: 1200.4 },
      { server: 'https://c.example', serviceMs: 30, ageMs: 0 },
    ];
    const header = formatLoadHeader(loads);
    expect(header).toBe('"http://b.localhost:8082";dur=8.1;age=1200, "https://c.example";dur=30;age=0');
    expect(parseLoadHeader(header)).toEqual([
      { server: 'http://b.localhost:8082', serviceMs: 8.1, ageMs: 1200 },
      { server: 'https://c.example', serviceMs: 30, ageMs: 0 },
    ]);
  });

  it('skips members that are not http(s) origins or have no duration, and keeps the rest', () => {
    const parsed = parseLoadHeader('"javascript:alert(1)";dur=1, "http://x.test/path";dur=2, "http://ok.test";age=5, garbage, "HTTP://OK.TEST:80";dur=3;age=7;future=1');
    expect(parsed).toEqual([{ server: 'http://ok.test', serviceMs: 3, ageMs: 7 }]);
    expect(parseLoadHeader('')).toEqual([]);
    expect(parseLoadHeader(undefined)).toEqual([]);
  });

  it('reads at most 64 members', () => {
    const many = Array.from({ length: 100 }, (_, i) => `"http://s${i}.test";dur=1`).join(', ');
    expect(parseLoadHeader(many)).toHaveLength(64);
  });
});
