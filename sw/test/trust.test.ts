import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { BindingsIndex, type BindingsDocument } from '@webpp/core';
import { TrustRule } from '../src/trust.js';

const SITE = 'http://a.localhost:8081';
const B = 'http://b.localhost:8082';
const C = 'http://c.localhost:8083';
const EVIL = 'http://evil.localhost:9999';
const digest = `sha256-${createHash('sha256').update('x').digest('base64')}`;

function rule(): TrustRule {
  const trust = new TrustRule(SITE);
  // What the site's own origin said: its files are on itself and on B.
  trust.learnServers([{ logical: `${SITE}/`, prefix: true, replicas: [`${SITE}/`, `${B}/`] }]);
  trust.learnOwnVersion(10);
  return trust;
}

describe('TrustRule', () => {
  it('knows the own origin only by the server asked and where the answer came from', () => {
    const trust = rule();
    expect(trust.isOwn(SITE)).toBe(true);
    expect(trust.isOwn(SITE, `${SITE}/x.png`)).toBe(true);
    expect(trust.isOwn(B, `${B}/x.png`)).toBe(false);
    // Asked the own origin, answered (after a redirect) by another origin: not the own origin's word.
    expect(trust.isOwn(SITE, `${B}/x.png`)).toBe(false);
  });

  it("keeps a replica's rows that bind the site's URLs to servers the site uses", () => {
    const document: BindingsDocument = {
      directoryVersion: 2,
      bindings: [
        { logical: `${SITE}/img/`, prefix: true, replicas: [`${B}/img/`, `${SITE}/img/`] },
        { logical: `${SITE}/a.css`, prefix: false, replicas: [`${B}/mirror/a.css`] },
      ],
    };
    expect(rule().screen(document)).toEqual({ document, dropped: [], ignoredDigests: 0 });
  });

  it('drops rows that name a server nobody named, or bind URLs of another site; the rest still applies', () => {
    const good = { logical: `${SITE}/ok.js`, prefix: false, replicas: [`${B}/ok.js`] };
    const screened = rule().screen({
      directoryVersion: 5,
      bindings: [
        { logical: `${SITE}/`, prefix: true, replicas: [`${B}/`, `${EVIL}/`] },
        good,
        { logical: `${C}/x.js`, prefix: false, replicas: [`${B}/x.js`] },
      ],
      digests: [{ logical: `${SITE}/ok.js`, integrity: digest }],
    });
    expect(screened.document).toEqual({ directoryVersion: 5, bindings: [good] });
    expect(screened.dropped).toEqual([
      { logical: `${SITE}/`, reason: 'unknown-server', server: EVIL },
      { logical: `${C}/x.js`, reason: 'foreign-logical-url' },
    ]);
    // A replica never sets the digest its own bytes are checked against.
    expect(screened.ignoredDigests).toBe(1);
    expect(screened.document.digests).toBeUndefined();
  });

  it('trusts a server once the own origin names it', () => {
    const trust = rule();
    const row = { logical: `${SITE}/new.js`, prefix: false, replicas: [`${C}/new.js`] };
    expect(trust.screen({ directoryVersion: 1, bindings: [row] }).dropped).toHaveLength(1);
    trust.learnServers([{ logical: `${SITE}/other.js`, prefix: false, replicas: [`${C}/other.js`] }]);
    expect(trust.screen({ directoryVersion: 1, bindings: [row] }).dropped).toHaveLength(0);
  });

  it("caps a replica's directory version at the own origin's, so the site's next header still replaces its rows", () => {
    const trust = rule();
    const index = new BindingsIndex();
    // A replica claims a huge version for a row that binds /app.js to itself.
    const pinned = trust.screen({ directoryVersion: Number.MAX_SAFE_INTEGER, bindings: [{ logical: `${SITE}/app.js`, prefix: false, replicas: [`${B}/app.js`] }] });
    expect(pinned.document.directoryVersion).toBe(10);
    index.apply(pinned.document);
    // The own origin then binds /app.js elsewhere at its own version: that wins.
    trust.learnOwnVersion(10);
    index.apply({ directoryVersion: 10, bindings: [{ logical: `${SITE}/app.js`, prefix: false, replicas: [`${SITE}/app.js`] }] });
    expect(index.resolve(`${SITE}/app.js`)?.physicalUrls).toEqual([`${SITE}/app.js`]);
  });
});
