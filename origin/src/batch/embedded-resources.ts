/**
 * The resources a page surely embeds, i.e. what a browser fetches to render it whatever the
 * client (paper Section 3.4: "all resources embedded in it"). They are found by the same
 * single walk that finds the references getting bindings (htmlReferences in
 * bindings/html-references.ts, which documents the rules). A batch adds to them the
 * responsive-image candidates the client's hints pick and what the page's style sheets
 * load (embedded-plan.ts), which need the request and the sheets.
 */
import { htmlReferences } from '../bindings/html-references.js';

/** Absolute URLs (no fragment) of the resources `html` embeds, deduplicated, in document order. */
export function embeddedResourceUrls(html: string, pageUrl: string): string[] {
  return htmlReferences(html, pageUrl).embeddedUrls;
}
