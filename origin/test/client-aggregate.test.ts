/**
 * The client aggregate's parts (issue 13 §6): the coarse network class, and the rule that no
 * single honest worker's figures are published — with a fake clock.
 */
import { describe, expect, it } from 'vitest';
import { ClientAggregates } from '../src/client-aggregate/client-aggregates.js';
import { NetworkClasses, prefixOf, reporterPrefixOf } from '../src/client-aggregate/network-class.js';

describe('network classes', () => {
  it('group IPv4 by /16 and IPv6 by /32, IPv4-mapped addresses as IPv4', () => {
    expect(prefixOf('203.0.113.7')).toBe('v4:203.0');
    expect(prefixOf('::ffff:203.0.200.1')).toBe('v4:203.0');
    expect(prefixOf('2001:db8:abcd:1::7')).toBe('v6:2001:0db8');
    expect(prefixOf('2001:DB8::1')).toBe('v6:2001:0db8');
    expect(prefixOf('::1')).toBe('v6:0000:0000');
    expect(prefixOf('not an ip')).toBeUndefined();
  });

  it('name a reporter by its IPv4 address or its IPv6 /64', () => {
    expect(reporterPrefixOf('203.0.113.7')).toBe('r4:203.0.113.7');
    expect(reporterPrefixOf('::ffff:203.0.113.7')).toBe('r4:203.0.113.7');
    expect(reporterPrefixOf('2001:db8:abcd:1::7')).toBe('r6:2001:0db8:abcd:0001');
    const classes = new NetworkClasses();
    expect(classes.reporterOf('2001:db8:abcd:1::7')).toBe(classes.reporterOf('2001:db8:abcd:1:ffff::9'));
    expect(classes.reporterOf('198.51.1.2')).not.toBe(classes.reporterOf('198.51.1.3'));
  });

  it('are opaque ids: equal within a block, different across blocks, never the address', () => {
    const classes = new NetworkClasses();
    const id = classes.classOf('198.51.1.2');
    expect(id).toMatch(/^[0-9a-f]{16}$/);
    expect(classes.classOf('198.51.250.9')).toBe(id);
    expect(classes.classOf('198.52.1.2')).not.toBe(id);
    // Another process (another secret) gives the same block another id.
    expect(new NetworkClasses().classOf('198.51.1.2')).not.toBe(id);
  });
});

describe('the aggregate', () => {
  const known = (): boolean => true;
  const options = { intervalMs: 60_000, minReports: 3, halfLifeMs: 600_000, reportsPerMinute: 1000 };

  it('never publishes one honest worker reporting once per interval, however long it stays', () => {
    const aggregates = new ClientAggregates(options);
    let published = 0;
    for (let minute = 0; minute < 500; minute += 1) {
      const nowMs = 1_012_345 + minute * 60_000; // as close together as the interval allows
      aggregates.take('class', 1, [{ server: 'http://b.test', responseMs: 50 }], known, nowMs);
      published += aggregates.published('class', nowMs).length;
    }
    expect(published).toBe(0);
  });

  it('publishes once k distinct reporters reported within the current and previous interval, and stops when they age out', () => {
    const aggregates = new ClientAggregates(options);
    const t0 = 6_000_000;
    aggregates.take('class', 1, [{ server: 'http://b.test', responseMs: 100 }], known, t0);
    aggregates.take('class', 2, [{ server: 'http://b.test', responseMs: 400 }], known, t0 + 1000);
    expect(aggregates.published('class', t0 + 1000)).toEqual([]);
    aggregates.take('class', 3, [{ server: 'http://b.test', responseMs: 200 }], known, t0 + 61_000);
    const [row] = aggregates.published('class', t0 + 61_000);
    expect(row?.sampleCount).toBe(3);
    // A decayed geometric mean: close to the cube root of 100·400·200 = 200 (older reports weigh a little less).
    expect(row?.responseMs).toBeGreaterThan(196);
    expect(row?.responseMs).toBeLessThan(204);
    // Other classes see nothing of it.
    expect(aggregates.published('other', t0 + 61_000)).toEqual([]);
    // Two intervals later the first two reports no longer count.
    expect(aggregates.published('class', t0 + 121_000)).toEqual([]);
  });

  it('counts a reporter of both intervals once, and ignores its second report in one interval', () => {
    const aggregates = new ClientAggregates(options);
    const t0 = 6_000_000;
    const row = [{ server: 'http://b.test', responseMs: 100 }];
    aggregates.take('class', 1, row, known, t0);
    aggregates.take('class', 2, row, known, t0);
    aggregates.take('class', 2, [{ server: 'http://b.test', responseMs: 50_000 }], known, t0 + 1);
    // Next interval: 1 and 2 again, still two distinct reporters, then a third.
    aggregates.take('class', 1, row, known, t0 + 60_000);
    aggregates.take('class', 2, row, known, t0 + 60_000);
    expect(aggregates.published('class', t0 + 60_000)).toEqual([]);
    aggregates.take('class', 3, row, known, t0 + 60_000);
    const [published] = aggregates.published('class', t0 + 60_000);
    expect(published?.sampleCount).toBe(3);
    expect(published?.responseMs).toBeCloseTo(100, 6);
    expect(aggregates.gauges(t0 + 60_000)).toMatchObject({ reportsAccepted: 5, reportsRepeated: 1 });
  });
});
