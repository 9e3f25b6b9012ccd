import { describe, expect, it } from 'vitest';
import type { ResolvedBinding } from '@webpp/core';
import { parseRelocateQuery, relocateEmbeds } from '../src/embed-relocation.js';
import type { EmbedRelocationOptions } from '../src/embed-relocation.js';

const A = 'http://a.localhost:1';
const B = 'http://b.localhost:2';
const C = 'http://c.localhost:3';
const PAGE = `${A}/page.html`;
const IMAGE = `${A}/img/dino.png`;

/** The worker's side, with a real HTTP answer (or refusal) for the own server's HEAD. */
function options(over: Partial<EmbedRelocationOptions> & { ownUp?: boolean } = {}): EmbedRelocationOptions & { heads: string[] } {
  const heads: string[] = [];
  return {
    heads,
    resolve: (url) => (url === IMAGE ? ({ logical: url, physicalUrls: [`${A}/img/dino.png`, `${B}/img/dino.png`, `${C}/img/dino.png`] } as unknown as ResolvedBinding) : undefined),
    ordered: (resolved) => [...resolved.physicalUrls].reverse(), // the policy prefers c, then b, then a
    isFailed: () => false,
    servedPage: () => undefined,
    fetch: (request) => {
      heads.push(`${request.method} ${request.url}`);
      return over.ownUp === false ? Promise.reject(new TypeError('Failed to fetch')) : Promise.resolve(new Response(null, { status: 200 }));
    },
    ...over,
  };
}

describe('relocateEmbeds', () => {
  it('leaves an element alone when the page came from its own server (no request)', async () => {
    const deps = options({ servedPage: () => A });
    expect(await relocateEmbeds({ urls: [IMAGE], failed: false, pageUrl: PAGE }, deps)).toEqual([null]);
    expect(deps.heads).toEqual([]);
  });

  it('checks the own server with one HEAD when a replica served the page, and keeps a live one', async () => {
    const deps = options({ servedPage: () => B });
    expect(await relocateEmbeds({ urls: [IMAGE, IMAGE], failed: false, pageUrl: PAGE }, deps)).toEqual([null, null]);
    expect(deps.heads).toEqual([`HEAD ${IMAGE}`]);
  });

  it("names the policy's first live replica on another server when the own server is down, failed or the load failed", async () => {
    expect(await relocateEmbeds({ urls: [IMAGE], failed: false, pageUrl: PAGE }, options({ ownUp: false }))).toEqual([`${C}/img/dino.png`]);
    expect(await relocateEmbeds({ urls: [IMAGE], failed: false, pageUrl: PAGE }, options({ isFailed: (server) => server === A || server === C }))).toEqual([`${B}/img/dino.png`]);
    expect(await relocateEmbeds({ urls: [IMAGE], failed: true, pageUrl: PAGE }, options({ servedPage: () => A }))).toEqual([`${C}/img/dino.png`]);
  });

  it('answers null for URLs without bindings', async () => {
    expect(await relocateEmbeds({ urls: [`${A}/unbound.pdf`, 'data:,x'], failed: true, pageUrl: PAGE }, options())).toEqual([null, null]);
  });
});

describe('parseRelocateQuery', () => {
  it('accepts a well-formed query and refuses anything else', () => {
    expect(parseRelocateQuery({ type: 'webpp:relocate', urls: [IMAGE], failed: false, pageUrl: PAGE })).toEqual({ urls: [IMAGE], failed: false, pageUrl: PAGE });
    expect(parseRelocateQuery({ urls: IMAGE, failed: false, pageUrl: PAGE })).toBeUndefined();
    expect(parseRelocateQuery({ urls: [1], failed: false, pageUrl: PAGE })).toBeUndefined();
    expect(parseRelocateQuery({ urls: new Array(101).fill(IMAGE), failed: false, pageUrl: PAGE })).toBeUndefined();
    expect(parseRelocateQuery({ urls: [IMAGE], pageUrl: PAGE })).toBeUndefined();
  });
});
