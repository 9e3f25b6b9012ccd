/**
 * The resources a page embeds, i.e. what a browser fetches to render it (paper Section 3.4:
 * "all resources embedded in it"): the narrower set that goes into a batch. They are found
 * by the same single walk that finds the references getting bindings (htmlReferences in
 * bindings/html-references.ts, which documents the rules).
 */
import { htmlReferences } from '../bindings/html-references.js';

/** Absolute URLs (no fragment) of the resources `html` embeds, deduplicated, in document order. */
export function embeddedResourceUrls(html: string, pageUrl: string): string[] {
  return htmlReferences(html, pageUrl).embeddedUrls;
}
