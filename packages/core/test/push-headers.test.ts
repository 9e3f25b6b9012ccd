/** The wire format of server push (push/push-headers.ts, docs/protocol.md "Server push"). */
import { describe, expect, it } from 'vitest';
import { formatLoadHeader, formatServerTiming, parseLoadHeader, parseServerTiming, parseServerTimingIdle } from '@webpp/core';

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

describe('Server-Timing: webpp;idle (the unloaded service time)', () => {
  it('round-trips dur and idle at 0.1 ms, and writes no idle when there is none', () => {
    const header = formatServerTiming(12.46, 3.14);
    expect(header).toBe('webpp;dur=12.5;idle=3.1');
    expect(parseServerTiming(header)).toBe(12.5);
    expect(parseServerTimingIdle(header)).toBe(3.1);
    expect(formatServerTiming(12.46, undefined)).toBe('webpp;dur=12.5');
    expect(formatServerTiming(12.46, Number.NaN)).toBe('webpp;dur=12.5');
    expect(parseServerTimingIdle('webpp;dur=12.5')).toBeUndefined();
  });

  it('reads idle only from a webpp metric with a dur, and a malformed idle is absent while dur still counts', () => {
    expect(parseServerTimingIdle('db;dur=53;idle=4, webpp;dur=7;idle=2')).toBe(2);
    expect(parseServerTimingIdle('webpp;idle=2')).toBeUndefined();
    expect(parseServerTimingIdle('other;dur=1;idle=2')).toBeUndefined();
    for (const bad of ['-1', 'x', '1e3', '', '99999999999', 'Infinity']) {
      const header = `webpp;dur=7;idle=${bad}`;
      expect(parseServerTiming(header), header).toBe(7);
      expect(parseServerTimingIdle(header), header).toBeUndefined();
    }
    expect(parseServerTimingIdle(null)).toBeUndefined();
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

  it('round-trips idle where a peer has one, and a row without it (an older peer) still counts', () => {
    const header = formatLoadHeader([
      { server: 'http://b.localhost:8082', serviceMs: 8.14, idleServiceMs: 2.96, ageMs: 10 },
      { server: 'http://c.localhost:8083', serviceMs: 30, ageMs: 0 },
    ]);
    expect(header).toBe('"http://b.localhost:8082";dur=8.1;idle=3;age=10, "http://c.localhost:8083";dur=30;age=0');
    expect(parseLoadHeader(header)).toEqual([
      { server: 'http://b.localhost:8082', serviceMs: 8.1, idleServiceMs: 3, ageMs: 10 },
      { server: 'http://c.localhost:8083', serviceMs: 30, ageMs: 0 },
    ]);
  });

  it('drops a malformed idle and keeps the row', () => {
    const parsed = parseLoadHeader('"http://b.test";dur=8;idle=-2;age=1, "http://c.test";dur=9;idle=nan, "http://d.test";idle=4;age=1');
    expect(parsed).toEqual([
      { server: 'http://b.test', serviceMs: 8, ageMs: 1 },
      { server: 'http://c.test', serviceMs: 9, ageMs: 0 },
    ]);
    for (const load of parsed) expect(load).not.toHaveProperty('idleServiceMs');
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
