import { describe, expect, it } from 'vitest';
import { unrecoveredNetworkErrors } from './network-errors.js';

const origin = 'http://chaos.localhost:8080';

describe('unrecoveredNetworkErrors', () => {
  it('counts an own resource whose only entry is a network error (status 0), which a check of status ≥ 400 misses', () => {
    expect(unrecoveredNetworkErrors([[`${origin}/css/site.css`, 200, 'link'], [`${origin}/webpp.js`, 0, 'script']], origin)).toEqual([`${origin}/webpp.js`]);
  });

  it('leaves out a resource loaded again after its network error (the page script\'s retry), other origins\' hidden statuses, the browser\'s favicon, and error statuses (counted as failed resources already)', () => {
    const entries = [
      [`${origin}/img/photo-1.png`, 0, 'img'],
      [`${origin}/img/photo-1.png`, 200, 'img'],
      ['http://cdn.localhost:8081/font.woff2', 0, 'css'],
      [`${origin}/favicon.ico`, 0, 'other'],
      [`${origin}/files/big.bin`, 503, 'fetch'],
    ] as const;
    expect(unrecoveredNetworkErrors(entries, origin)).toEqual([]);
  });

  it('names a URL once however many times it failed', () => {
    expect(unrecoveredNetworkErrors([[`${origin}/img/photo-2.png`, 0, 'img'], [`${origin}/img/photo-2.png`, 0, 'img']], origin)).toEqual([`${origin}/img/photo-2.png`]);
  });
});
