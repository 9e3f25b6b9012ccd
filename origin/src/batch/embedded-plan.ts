/**
 * The embedded resources that go into one page's batch, in the order they are sent:
 *  1. what the page surely loads (scripts, sheets, plain images…: htmlReferences);
 *  2. of each responsive image, the candidate the client's hints say it will fetch
 *     (client-hints.ts), or none when they cannot tell;
 *  3. what its style sheets load: @import-ed sheets, recursively, and the fonts and
 *     background images the page uses (stylesheet-resources.ts). Sheets are read through
 *     `readSheet` (this server's own copies only), level by level, at most
 *     MAX_SHEET_DEPTH imports deep and MAX_SHEETS sheets in all; the bodies read are kept
 *     so that the batch sends them without reading them again.
 */
import { cssFacts } from '../bindings/css-syntax.js';
import type { HtmlReferences } from '../bindings/html-references.js';
import type { PageFacts } from '../bindings/page-facts.js';
import { chooseImage, type ClientHints } from './client-hints.js';
import { importedSheets, stylesheetResources, type SheetFacts } from './stylesheet-resources.js';

/** How deep `@import` chains are followed (a linked sheet is depth 1). */
export const MAX_SHEET_DEPTH = 4;
/** Most style sheets read for one page. */
export const MAX_SHEETS = 32;

/** A page's parse, kept per page version (the sheets' facts come fresh with each read). */
export interface PageAnalysis {
  references: HtmlReferences & { page: PageFacts };
  /** Facts of the page's <style> elements. */
  inlineSheets: SheetFacts[];
}

/** A style sheet this server holds, as read for planning. */
export interface ReadSheet<Body> {
  facts: SheetFacts;
  /** The response, sent as the sheet's part. */
  body: Body;
}

export interface EmbeddedPlan<Body> {
  /** Logical URLs, deduplicated, without the page itself. */
  urls: string[];
  /** Sheets already read, by URL. */
  sheetBodies: Map<string, Body>;
}

export function analyzePage(references: HtmlReferences & { page: PageFacts }): PageAnalysis {
  const inlineSheets = references.page.inlineSheets.map((css) => ({ baseUrl: references.baseUrl, facts: cssFacts(css) }));
  return { references, inlineSheets };
}

export async function planEmbedded<Body>(
  analysis: PageAnalysis,
  pageUrl: string,
  hints: ClientHints | undefined,
  readSheet: (url: string) => Promise<ReadSheet<Body> | undefined>,
): Promise<EmbeddedPlan<Body>> {
  const { references, inlineSheets } = analysis;
  const page = references.page;
  const images = page.imageChoices.flatMap((choice) => {
    const url = chooseImage(choice, hints);
    return url === undefined || url === '' ? [] : [url];
  });

  const sheets: SheetFacts[] = [...inlineSheets];
  const sheetBodies = new Map<string, Body>();
  const discovered: string[] = [];
  const seen = new Set<string>();
  const inlineImports = inlineSheets.flatMap(importedSheets);
  discovered.push(...inlineImports);
  let level = [...page.stylesheets, ...inlineImports];
  for (let depth = 1; depth <= MAX_SHEET_DEPTH && level.length > 0; depth++) {
    const batch: string[] = [];
    for (const url of level) {
      if (seen.has(url) || seen.size >= MAX_SHEETS) continue;
      seen.add(url);
      batch.push(url);
    }
    const read = await Promise.all(batch.map((url) => readSheet(url)));
    level = [];
    read.forEach((sheet, index) => {
      if (sheet === undefined) return;
      sheets.push(sheet.facts);
      sheetBodies.set(batch[index] as string, sheet.body);
      const imports = importedSheets(sheet.facts);
      discovered.push(...imports);
      level.push(...imports);
    });
  }

  const urls = new Set([...references.embeddedUrls, ...images, ...discovered, ...stylesheetResources(sheets, page)]);
  urls.delete(pageUrl);
  return { urls: [...urls], sheetBodies };
}
