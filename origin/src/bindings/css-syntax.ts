/**
 * What a style sheet (or a `style` attribute) refers to, read with a real CSS parser
 * (css-tree, which tokenizes as CSS Syntax Level 3 does), not with regular expressions:
 * strings and comments can hold text that looks like `url(...)` and is not a reference.
 *
 * Two views of one parse:
 *  - `references`: every URL the sheet names (`url()`, `@import "..."`, `image-set("...")`),
 *    which get bindings (paper Section 5.1: references in a resource get bound);
 *  - `imports`, `fontFaces` and `rules`: the facts batching needs to tell which of them a
 *    browser fetches to render a page (batch/stylesheet-resources.ts).
 */
import { parse, type CssNode } from 'css-tree';

/** Simple selectors a rule needs on the page (all of them, anywhere: a token-level test). */
export interface SelectorNeeds {
  tags: string[];
  ids: string[];
  classes: string[];
  attributes: string[];
  /** The rule only applies on interaction (:hover, :focus…): nothing is fetched at load. */
  interactive: boolean;
}

export interface StyleRuleFacts {
  /** One entry per selector of the rule's selector list (any may match). */
  selectors: SelectorNeeds[];
  /** Raw URLs in the rule's declarations (background, list-style, mask, cursor…). */
  urls: string[];
  /** Font family names the rule's `font-family` / `font` declarations ask for, lower case. */
  families: string[];
}

export interface FontFaceFacts {
  /** The face's family name, lower case. */
  family: string;
  /** The first `src` a browser would download (a url() of a supported format), raw. */
  url: string | undefined;
  /** Code point ranges of `unicode-range`, inclusive; undefined: every code point. */
  ranges: Array<[number, number]> | undefined;
}

export interface CssFacts {
  /** Every raw URL the text references, in order, without duplicates. */
  references: string[];
  /** Raw URLs of `@import` rules. */
  imports: string[];
  fontFaces: FontFaceFacts[];
  rules: StyleRuleFacts[];
}

/** Font formats Chromium downloads (CSS Fonts 4 §4.3.1 `format()`); others are skipped. */
const SUPPORTED_FONT_FORMATS = new Set(['woff2', 'woff', 'truetype', 'opentype', 'collection', 'woff2-variations', 'woff-variations', 'truetype-variations', 'opentype-variations']);
/** User-action pseudo-classes (Selectors 4 §9): a rule behind one is not applied at load. */
const INTERACTIVE_PSEUDO_CLASSES = new Set(['hover', 'focus', 'active', 'focus-visible', 'focus-within', 'visited', 'target', 'target-within']);
/** At-rules whose rules never apply while a page loads on screen, or are not style rules. */
const SKIPPED_AT_RULES = new Set(['page', 'keyframes', '-webkit-keyframes', 'namespace', 'counter-style', 'font-feature-values', 'property']);

const parseOptions = { parseRulePrelude: true, parseAtrulePrelude: true, parseValue: true, positions: false, onParseError: () => undefined };

/** Facts of a style sheet's text. */
export function cssFacts(css: string): CssFacts {
  return collect(parse(css, { ...parseOptions, context: 'stylesheet' }), 'sheet');
}

/** Facts of a `style` attribute (a declaration list; its rule is the element itself). */
export function declarationFacts(declarations: string): CssFacts {
  return collect(parse(declarations, { ...parseOptions, context: 'declarationList' }), 'attribute');
}

function collect(root: CssNode, kind: 'sheet' | 'attribute'): CssFacts {
  const references = new Set<string>();
  const facts: CssFacts = { references: [], imports: [], fontFaces: [], rules: [] };
  const everything: SelectorNeeds = { tags: [], ids: [], classes: [], attributes: [], interactive: false };

  const visitBlock = (children: Iterable<CssNode>, selectors: SelectorNeeds[], printOnly: boolean): void => {
    const urls: string[] = [];
    const families: string[] = [];
    for (const child of children) {
      if (child.type === 'Declaration') {
        const found = valueUrls(child.value, references);
        urls.push(...found);
        const property = child.property.toLowerCase();
        if (property === 'font-family' || property === 'font') families.push(...familyNames(child.value, property === 'font'));
      } else if (child.type === 'Rule') {
        visitRule(child, printOnly);
      } else if (child.type === 'Atrule') {
        visitAtrule(child, printOnly);
      }
    }
    if (!printOnly && (urls.length > 0 || families.length > 0)) facts.rules.push({ selectors, urls, families });
  };

  const visitRule = (rule: CssNode & { type: 'Rule' }, printOnly: boolean): void => {
    const selectors = rule.prelude.type === 'SelectorList' ? [...rule.prelude.children].map(selectorNeeds) : [everything];
    visitBlock(rule.block.children, selectors, printOnly);
  };

  const visitAtrule = (atrule: CssNode & { type: 'Atrule' }, printOnly: boolean): void => {
    const name = atrule.name.toLowerCase();
    if (name === 'import') {
      const target = atrule.prelude?.type === 'AtrulePrelude' ? atrule.prelude.children.first : null;
      const url = target?.type === 'Url' || target?.type === 'String' ? target.value.trim() : '';
      if (url !== '') {
        references.add(url);
        facts.imports.push(url);
      }
      return;
    }
    if (SKIPPED_AT_RULES.has(name) || atrule.block === null) return;
    if (name === 'font-face') {
      facts.fontFaces.push(fontFace(atrule.block.children, references));
      return;
    }
    // @media, @supports, @layer, @container, @scope…: their rules apply; @media print never on screen.
    visitBlock(atrule.block.children, [everything], printOnly || (name === 'media' && isPrintOnly(atrule)));
  };

  if (root.type === 'StyleSheet') {
    for (const child of root.children) {
      if (child.type === 'Rule') visitRule(child, false);
      else if (child.type === 'Atrule') visitAtrule(child, false);
    }
  } else if (root.type === 'DeclarationList' && kind === 'attribute') {
    visitBlock(root.children, [everything], false);
  }
  facts.references = [...references];
  return facts;
}

/** url() values, and the strings of image-set() (CSS Images 4 §2.2), in a declaration value. */
function valueUrls(node: CssNode, references: Set<string>): string[] {
  const urls: string[] = [];
  const visit = (current: CssNode, inImageSet: boolean): void => {
    if (current.type === 'Url' || (inImageSet && current.type === 'String')) {
      const url = current.value.trim();
      if (url !== '') {
        urls.push(url);
        references.add(url);
      }
      return;
    }
    if (current.type === 'Value' || current.type === 'Function' || current.type === 'Parentheses') {
      const imageSet = current.type === 'Function' && /^(-webkit-)?image-set$/i.test(current.name);
      for (const child of current.children) visit(child, imageSet || (inImageSet && current.type !== 'Function'));
    }
  };
  visit(node, false);
  return urls;
}

/** Family names of a font-family value (comma separated), or of a `font` shorthand's tail. */
function familyNames(value: CssNode, shorthand: boolean): string[] {
  if (value.type !== 'Value') return [];
  const groups: string[][] = [[]];
  for (const child of value.children) {
    if (child.type === 'Operator' && child.value === ',') groups.push([]);
    else if (child.type === 'String') groups[groups.length - 1]?.push(child.value);
    else if (child.type === 'Identifier') groups[groups.length - 1]?.push(child.name);
    // In `font`, the family comes after the size: words before it (bold, italic) are not part of it.
    else if (shorthand && groups.length === 1) groups[0] = [];
  }
  return groups.map((words) => words.join(' ').trim().toLowerCase()).filter((name) => name !== '');
}

function fontFace(children: Iterable<CssNode>, references: Set<string>): FontFaceFacts {
  let family = '';
  let url: string | undefined;
  let ranges: Array<[number, number]> | undefined;
  for (const child of children) {
    if (child.type !== 'Declaration') continue;
    const property = child.property.toLowerCase();
    if (property === 'font-family') family = familyNames(child.value, false)[0] ?? '';
    else if (property === 'src') url = firstFetchedSource(child.value, references);
    else if (property === 'unicode-range' && child.value.type === 'Value') {
      ranges = [...child.value.children].flatMap((range) => (range.type === 'UnicodeRange' ? [parseUnicodeRange(range.value)] : []));
    }
  }
  return { family, url, ranges };
}

/** CSS Fonts 4 §4.3: the browser tries `src` entries in order and downloads the first it supports. */
function firstFetchedSource(value: CssNode, references: Set<string>): string | undefined {
  if (value.type !== 'Value') return undefined;
  let chosen: string | undefined;
  let url: string | undefined;
  let supported = true;
  const settle = (): void => {
    if (chosen === undefined && url !== undefined && supported) chosen = url;
    url = undefined;
    supported = true;
  };
  for (const child of value.children) {
    if (child.type === 'Operator' && child.value === ',') settle();
    else if (child.type === 'Url') {
      url = child.value.trim();
      if (url !== '') references.add(url);
    } else if (child.type === 'Function' && child.name.toLowerCase() === 'format') {
      const formats = [...child.children].flatMap((arg) => (arg.type === 'String' ? [arg.value] : arg.type === 'Identifier' ? [arg.name] : []));
      supported = formats.some((format) => SUPPORTED_FONT_FORMATS.has(format.toLowerCase()));
    }
  }
  settle();
  return chosen;
}

/** "U+0000-00FF", "U+0131", "U+4??" (CSS Fonts 4 §4.5) as an inclusive range. */
function parseUnicodeRange(text: string): [number, number] {
  const body = text.replace(/^u\+/i, '');
  const [from = '0', to] = body.split('-');
  if (to !== undefined) return [Number.parseInt(from, 16), Number.parseInt(to, 16)];
  return [Number.parseInt(from.replace(/\?/g, '0'), 16), Number.parseInt(from.replace(/\?/g, 'f'), 16)];
}

function isPrintOnly(atrule: CssNode & { type: 'Atrule' }): boolean {
  if (atrule.prelude?.type !== 'AtrulePrelude') return false;
  const list = atrule.prelude.children.first;
  if (list?.type !== 'MediaQueryList') return false;
  const queries = [...list.children];
  return queries.length > 0 && queries.every((query) => query.type === 'MediaQuery' && query.modifier !== 'not' && query.mediaType?.toLowerCase() === 'print');
}

function selectorNeeds(selector: CssNode): SelectorNeeds {
  const needs: SelectorNeeds = { tags: [], ids: [], classes: [], attributes: [], interactive: false };
  if (selector.type !== 'Selector') return needs;
  for (const part of selector.children) {
    if (part.type === 'TypeSelector' && part.name !== '*') needs.tags.push(part.name.toLowerCase().replace(/^.*\|/, ''));
    else if (part.type === 'IdSelector') needs.ids.push(part.name);
    else if (part.type === 'ClassSelector') needs.classes.push(part.name);
    else if (part.type === 'AttributeSelector') needs.attributes.push(part.name.name.toLowerCase());
    // :not(), :is(), :where(), :has()… are not looked into: the rule is kept (it may match).
    else if (part.type === 'PseudoClassSelector' && INTERACTIVE_PSEUDO_CLASSES.has(part.name.toLowerCase())) needs.interactive = true;
  }
  return needs;
}
