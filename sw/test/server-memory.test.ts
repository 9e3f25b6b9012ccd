/** The worker's bounded in-memory hints: a full one forgets its oldest entry, not everything. */
import { describe, expect, it } from 'vitest';
import { StaleBindings } from '../src/server-memory.js';
import { OwnOriginUrls } from '../src/own-origin-answers.js';

describe('bounded memories', () => {
  it('a full StaleBindings forgets the URL noted longest ago and still knows the recent ones', () => {
    const stale = new StaleBindings(3);
    for (const n of [1, 2, 3, 4]) stale.note(`https://r.test/${n}`, 7);
    expect(stale.isStale('https://r.test/1', 7)).toBe(false);
    for (const n of [2, 3, 4]) expect(stale.isStale(`https://r.test/${n}`, 7)).toBe(true);
    // Newer bindings make an old note moot.
    expect(stale.isStale('https://r.test/4', 8)).toBe(false);
  });

  it('OwnOriginUrls keeps the most recently noted, noting again makes a URL the newest', () => {
    const personal = new OwnOriginUrls(2);
    personal.note('/a');
    personal.note('/b');
    personal.note('/a');
    personal.note('/c');
    expect(['/a', '/b', '/c'].filter((url) => personal.has(url))).toEqual(['/a', '/c']);
  });
});
