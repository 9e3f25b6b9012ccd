import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { BindingsIndex, decodeBindings, encodeBindings, serverOf, type Binding, type BindingsDocument } from '@webpp/core';

const A = 'http://a.localhost:8081';
const B = 'http://b.localhost:8082';
const C = 'http://c.localhost:8083';

const exact = (path: string, ...servers: string[]): Binding => ({
  logical: A + path,
  prefix: false,
  replicas: servers.map((server) => server + path),
});
const doc = (directoryVersion: number, ...bindings: Binding[]): BindingsDocument => ({ directoryVersion, bindings });

describe('BindingsIndex.resolve', () => {
  const index = new BindingsIndex();
  index.apply(
    doc(
      5,
      exact('/index.html', A, B),
      exact('/search', A, C),
      exact('/search?q=cats', C),
      { logical: `${A}/static/`, prefix: true, replicas: [`${B}/mirror/static/`, `${C}/static/`] },
      { logical: `${A}/static/img/`, prefix: true, replicas: [`${C}/img/`] },
      { logical: `${A}/`, prefix: true, replicas: [`${A}/`, `${B}/`] },
    ),
  );

  it('finds exact bindings and ignores the fragment', () => {
    expect(index.resolve(`${A}/index.html#top`)).toMatchObject({
      logical: `${A}/index.html`,
      physicalUrls: [`${A}/index.html`, `${B}/index.html`],
      directoryVersion: 5,
    });
  });

  it('prefers an exact binding of the query, else carries the query over', () => {
    expect(index.resolve(`${A}/search?q=cats`)?.physicalUrls).toEqual([`${C}/search?q=cats`]);
    expect(index.resolve(`${A}/search?q=dogs`)?.physicalUrls).toEqual([`${A}/search?q=dogs`, `${C}/search?q=dogs`]);
  });

  it('uses the longest matching prefix and appends the rest of the URL', () => {
    expect(index.resolve(`${A}/static/img/cat.jpg?v=3`)).toMatchObject({
      physicalUrls: [`${C}/img/cat.jpg?v=3`],
      binding: { logical: `${A}/static/img/` },
    });
    expect(index.resolve(`${A}/static/css/site.css`)?.physicalUrls).toEqual([
      `${B}/mirror/static/css/site.css`,
      `${C}/static/css/site.css`,
    ]);
    expect(index.resolve(`${A}/static/`)?.physicalUrls).toEqual([`${B}/mirror/static/`, `${C}/static/`]);
    expect(index.resolve(`${A}/other/page`)?.binding.logical).toBe(`${A}/`);
  });

  it('matches prefixes on path segments only', () => {
    // "/staticfoo" is not below "/static/"; it falls to the root prefix.
    expect(index.resolve(`${A}/staticfoo/x`)?.binding.logical).toBe(`${A}/`);
  });

  it('returns undefined for unbound URLs and non-http(s) input', () => {
    expect(index.resolve(`${B}/index.html`)).toBeUndefined();
    expect(index.resolve('not a url')).toBeUndefined();
    expect(index.resolve('data:text/plain,hi')).toBeUndefined();
  });

  it('normalises the URL it is asked about', () => {
    expect(index.resolve('HTTP://A.LOCALHOST:8081/index.html')?.logical).toBe(`${A}/index.html`);
  });
});

describe('BindingsIndex.apply and directory versions', () => {
  it('a newer or equal version replaces a binding; an older one never does', () => {
    const index = new BindingsIndex();
    expect(index.apply(doc(5, exact('/x', A, B)))).toEqual({ applied: 1, ignored: 0 });
    expect(index.apply(doc(4, exact('/x', C)))).toEqual({ applied: 0, ignored: 1 });
    expect(index.resolve(`${A}/x`)?.physicalUrls).toEqual([`${A}/x`, `${B}/x`]);
    index.apply(doc(5, exact('/x', B)));
    expect(index.resolve(`${A}/x`)?.physicalUrls).toEqual([`${B}/x`]);
    index.apply(doc(9, exact('/x', C)));
    expect(index.resolve(`${A}/x`)).toMatchObject({ physicalUrls: [`${C}/x`], directoryVersion: 9 });
    expect(index.directoryVersion).toBe(9);
    expect(index.size).toBe(1);
  });

  it('ignores invalid bindings of a hand-built document', () => {
    const index = new BindingsIndex();
    const bad = { logical: 'javascript:x', prefix: false, replicas: [`${A}/x`] };
    expect(index.apply(doc(1, bad, exact('/ok', A)))).toEqual({ applied: 1, ignored: 1 });
  });

  it('ends with the newest version of each URL, whatever order documents arrive in', () => {
    const versioned = fc.uniqueArray(fc.nat(1000), { minLength: 1, maxLength: 6 }).chain((versions) =>
      fc.tuple(
        fc.constant(versions),
        fc.shuffledSubarray(versions, { minLength: versions.length, maxLength: versions.length }),
      ),
    );
    fc.assert(
      fc.property(versioned, ([versions, arrival]) => {
        const index = new BindingsIndex();
        const serverFor = (version: number) => `http://s${version}.localhost`;
        for (const version of arrival) index.apply(doc(version, exact('/x', serverFor(version))));
        const newest = Math.max(...versions);
        expect(index.resolve(`${A}/x`)).toMatchObject({ directoryVersion: newest, physicalUrls: [`${serverFor(newest)}/x`] });
      }),
    );
  });

  it('evicts the least recently applied exact bindings beyond maxEntries', () => {
    const index = new BindingsIndex({ maxEntries: 3 });
    index.apply(doc(1, { logical: `${A}/p/`, prefix: true, replicas: [`${B}/p/`] }, exact('/1', A), exact('/2', A)));
    index.apply(doc(1, exact('/1', B))); // refreshes /1
    index.apply(doc(1, exact('/3', A)));
    expect(index.size).toBe(3);
    expect(index.resolve(`${A}/2`)).toBeUndefined();
    expect(index.resolve(`${A}/1`)?.physicalUrls).toEqual([`${B}/1`]);
    expect(index.resolve(`${A}/p/z`)).toBeDefined();
    expect(() => new BindingsIndex({ maxEntries: 0 })).toThrow(RangeError);
  });

  it('applies what decodeBindings returns', () => {
    const index = new BindingsIndex();
    const result = decodeBindings(encodeBindings(doc(2, exact('/a', A, B))).value);
    if (!result.ok) throw new Error(result.error.message);
    index.apply(result.document);
    expect(index.resolve(`${A}/a`)?.physicalUrls).toEqual([`${A}/a`, `${B}/a`]);
  });
});

describe('BindingsIndex JSON', () => {
  it('round-trips through JSON text', () => {
    const index = new BindingsIndex();
    index.apply(doc(3, { ...exact('/x', A, B), validator: '"e1"' }, { logical: `${A}/d/`, prefix: true, replicas: [`${C}/d/`] }));
    index.apply(doc(4, exact('/y', C)));
    const copy = BindingsIndex.fromJSON(JSON.parse(JSON.stringify(index)));
    expect(copy.toJSON()).toEqual(index.toJSON());
    expect(copy.resolve(`${A}/d/e`)?.physicalUrls).toEqual([`${C}/d/e`]);
    expect(copy.resolve(`${A}/x`)?.binding.validator).toBe('"e1"');
  });

  it('drops malformed entries and never throws on bad data', () => {
    const good = { directoryVersion: 1, binding: exact('/ok', A) };
    const json = {
      formatVersion: 1,
      entries: [
        good,
        { directoryVersion: -1, binding: exact('/neg', A) },
        { directoryVersion: 1, binding: { ...exact('/nr', A), replicas: [] } },
        { directoryVersion: 1, binding: { ...exact('/js', A), replicas: ['javascript:1'] } },
        { directoryVersion: 1, binding: { logical: `${A}/p`, prefix: true, replicas: [`${B}/p/`] } },
        { directoryVersion: 1, binding: { ...exact('/v', A), validator: 7 } },
        null,
        'x',
      ],
    };
    const index = BindingsIndex.fromJSON(json);
    expect(index.size).toBe(1);
    expect(index.resolve(`${A}/ok`)).toBeDefined();
    for (const garbage of [null, undefined, 1, 'x', [], { formatVersion: 2, entries: [good] }, { formatVersion: 1, entries: {} }]) {
      expect(BindingsIndex.fromJSON(garbage).size).toBe(0);
    }
  });
});

describe('serverOf', () => {
  it('returns the origin of a physical URL', () => {
    expect(serverOf('http://b.localhost:8082/img/cat.jpg?x=1')).toBe(B);
    expect(serverOf('HTTPS://C.localhost:443/x')).toBe('https://c.localhost');
  });

  it('throws TypeError for anything but an absolute http(s) URL', () => {
    for (const bad of ['/relative', 'mailto:x@y', '']) expect(() => serverOf(bad)).toThrow(TypeError);
  });
});
