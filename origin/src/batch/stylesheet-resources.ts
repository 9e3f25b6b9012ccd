/**
 * Which resources named by a page's style sheets a browser fetches while rendering it
 * (CSS-discovered embedded resources, paper Section 3.4), from the sheets' facts
 * (bindings/css-syntax.ts) and the page's (bindings/page-facts.ts):
 *  - every `@import`ed sheet;
 *  - the url()s of rules that apply: every simple selector of one of the rule's selectors
 *    names an element name, id, class or attribute present on the page, and none is a
 *    user-action pseudo-class (a token-level test: structure is not checked, so a rule may
 *    be taken that a browser would not apply, never the reverse for plain selectors);
 *  - for each @font-face whose family an applying rule asks for and whose
 *    `unicode-range` covers a character of the page's text, the first `src` the browser
 *    supports (CSS Fonts 4 §4.3, §4.5). All faces of a used family are taken, whatever
 *    their weight and style.
 * URLs are returned resolved against each sheet's own URL.
 */
import type { CssFacts, SelectorNeeds, StyleRuleFacts } from '../bindings/css-syntax.js';
import type { PageFacts } from '../bindings/page-facts.js';
import { resolveReference } from '../bindings/html-references.js';

/** A parsed style sheet and the URL its references resolve against. */
export interface SheetFacts {
  baseUrl: string;
  facts: CssFacts;
}

function selectorApplies(needs: SelectorNeeds, page: PageFacts): boolean {
  return (
    !needs.interactive &&
    needs.tags.every((tag) => page.tags.has(tag)) &&
    needs.ids.every((id) => page.ids.has(id)) &&
    needs.classes.every((name) => page.classes.has(name)) &&
    needs.attributes.every((name) => page.attributes.has(name))
  );
}

function ruleApplies(rule: StyleRuleFacts, page: PageFacts): boolean {
  return rule.selectors.some((needs) => selectorApplies(needs, page));
}

function coversPageText(ranges: Array<[number, number]> | undefined, page: PageFacts): boolean {
  if (ranges === undefined) return true;
  for (const codePoint of page.codePoints) if (ranges.some(([from, to]) => codePoint >= from && codePoint <= to)) return true;
  return false;
}

function resolveAll(values: string[], baseUrl: string): string[] {
  return values.flatMap((value) => {
    const url = resolveReference(value, baseUrl);
    return url === undefined ? [] : [url];
  });
}

/** The `@import`ed sheets of one sheet, resolved. */
export function importedSheets(sheet: SheetFacts): string[] {
  return resolveAll(sheet.facts.imports, sheet.baseUrl);
}

/** Resources (not sheets) the page's sheets make the browser fetch, resolved, without duplicates. */
export function stylesheetResources(sheets: SheetFacts[], page: PageFacts): string[] {
  const usedFamilies = new Set<string>();
  const urls = new Set<string>();
  for (const sheet of sheets) {
    for (const rule of sheet.facts.rules) {
      if (!ruleApplies(rule, page)) continue;
      for (const family of rule.families) usedFamilies.add(family);
      for (const url of resolveAll(rule.urls, sheet.baseUrl)) urls.add(url);
    }
  }
  const fonts = new Set<string>();
  for (const sheet of sheets) {
    for (const face of sheet.facts.fontFaces) {
      if (face.url === undefined || !usedFamilies.has(face.family) || !coversPageText(face.ranges, page)) continue;
      for (const url of resolveAll([face.url], sheet.baseUrl)) fonts.add(url);
    }
  }
  // Fonts first: text waits for them, backgrounds do not hold up the first paint.
  return [...new Set([...fonts, ...urls])];
}
