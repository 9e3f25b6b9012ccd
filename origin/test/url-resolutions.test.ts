import { describe, expect, it } from 'vitest';
import { ReplicationDirectory } from '../src/directory/replication-directory.js';
import { UrlResolutions } from '../src/http/url-resolutions.js';

const A = 'http://a.localhost:8081';
const B = 'http://b.localhost:8082';

describe('UrlResolutions', () => {
  it('maps request URLs to logical URLs, and sees directory changes at once', () => {
    const directory = new ReplicationDirectory();
    directory.addReplica(`${A}/images/*`, `${B}/img/*`);
    const resolutions = new UrlResolutions(directory, B);
    expect(resolutions.resolve('/img/logo.png')).toMatchObject({ pageUrl: `${A}/images/logo.png`, replicated: true });
    expect(resolutions.resolve('/other.html')).toMatchObject({ pageUrl: `${B}/other.html`, replicated: false, own: undefined });
    directory.addReplica(`${A}/other.html`, `${B}/other.html`);
    expect(resolutions.resolve('/other.html')).toMatchObject({ pageUrl: `${A}/other.html`, replicated: true });
  });

  it('stays within its memory bound however many distinct URLs it sees', () => {
    const directory = new ReplicationDirectory();
    const resolutions = new UrlResolutions(directory, A, 64 * 1024);
    for (let index = 0; index < 5000; index += 1) resolutions.resolve(`/page-${index}.html?q=${index}`);
    expect(resolutions.size).toBeGreaterThan(10);
    expect(resolutions.size).toBeLessThan(200); // each entry costs at least ~300 bytes
    expect(resolutions.resolve('/page-4999.html?q=4999')?.pageUrl).toBe(`${A}/page-4999.html?q=4999`);
  });
});
