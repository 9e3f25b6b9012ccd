/** The wire format of server push (push/push-headers.ts, docs/protocol.md "Server push"). */
import { describe, expect, it } from 'vitest';
import { formatLoadHeader, formatServerTiming, parseLoadHeader, parseServerTiming, parseServerTimingUtilisation } from '@webpp/core';

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

describe('Server-Timing: webpp;util', () => {
  it('round-trips the utilisation at 0.01 next to the service time', () => {
    expect(formatServerTiming(12.46, 0.624)).toBe('webpp;dur=12.5;util=0.62');
    expect(parseServerTiming('webpp;dur=12.5;util=0.62')).toBe(12.5);
    expect(parseServerTimingUtilisation('webpp;dur=12.5;util=0.62')).toBe(0.62);
    expect(formatServerTiming(3, 1.7)).toBe('webpp;dur=3;util=1');
  });

  it('ignores a utilisation above 1, negative, malformed or without a dur', () => {
    expect(parseServerTimingUtilisation('webpp;dur=3;util=1.2')).toBeUndefined();
    expect(parseServerTimingUtilisation('webpp;dur=3;util=-0.2')).toBeUndefined();
    expect(parseServerTimingUtilisation('webpp;dur=3;util=high')).toBeUndefined();
    expect(parseServerTimingUtilisation('webpp;util=0.5')).toBeUndefined();
    expect(parseServerTimingUtilisation('webpp;dur=3')).toBeUndefined();
  });

  it('travels in webpp-load, and a bad one drops only itself', () => {
    const header = formatLoadHeader([{ server: 'http://b.localhost:8082', serviceMs: 8, utilisation: 0.3, ageMs: 10 }]);
    expect(header).toBe('"http://b.localhost:8082";dur=8;util=0.3;age=10');
    expect(parseLoadHeader(header)).toEqual([{ server: 'http://b.localhost:8082', serviceMs: 8, utilisation: 0.3, ageMs: 10 }]);
    expect(parseLoadHeader('"http://b.localhost:8082";dur=8;util=7;age=10')).toEqual([{ server: 'http://b.localhost:8082', serviceMs: 8, ageMs: 10 }]);
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
