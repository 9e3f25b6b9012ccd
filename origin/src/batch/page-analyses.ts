/**
 * The parse of each page version a batch was planned for (embedded-plan.ts), so that the
 * same page is parsed once (paper Section 5.1: the servlet cached its parses too). Keyed by
 * the page's logical URL and ETag (else a SHA-1 of its bytes: dynamic pages); least
 * recently used entries go first.
 */
import { createHash } from 'node:crypto';
import { pageReferences } from '../bindings/html-references.js';
import { analyzePage, type PageAnalysis } from './embedded-plan.js';

/** Pages whose parse is kept (each holds its element names, classes, text code points…). */
const MAX_PAGE_ANALYSES = 128;

export interface PageAnalyses {
  get(html: Buffer, pageUrl: string, etag: string | undefined): PageAnalysis;
}

export function createPageAnalyses(): PageAnalyses {
  const analyses = new Map<string, PageAnalysis>();
  return {
    get(html, pageUrl, etag) {
      const key = `${pageUrl}\u0000${etag ?? createHash('sha1').update(html).digest('base64')}`;
      const hit = analyses.get(key);
      if (hit !== undefined) {
        analyses.delete(key);
        analyses.set(key, hit);
        return hit;
      }
      const analysis = analyzePage(pageReferences(html.toString('utf8'), pageUrl));
      if (analyses.size >= MAX_PAGE_ANALYSES) analyses.delete(analyses.keys().next().value as string);
      analyses.set(key, analysis);
      return analysis;
    },
  };
}
