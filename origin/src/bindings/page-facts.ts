/**
 * What batching needs to know about a page beyond its plain references (collected by the
 * same walk as the references, html-references.ts, when asked):
 *  - the page's element names, ids, classes and attribute names, and the code points of its
 *    text, to tell which style sheet rules apply and which web fonts are used
 *    (batch/stylesheet-resources.ts);
 *  - its inline style sheets;
 *  - its responsive images: an <img srcset>, a <picture> or a preload with imagesrcset, of
 *    whose candidates the browser fetches one (HTML Standard §4.8.4.3, "select an image
 *    source"), chosen by batch/client-hints.ts.
 */
import type { SrcsetCandidate } from './srcset.js';

/** One source of a responsive image: a <picture> <source>, or the <img> itself (last). */
export interface ImageSource {
  /** Resolved candidate URLs with their descriptors. */
  candidates: SrcsetCandidate[];
  /** The `sizes` attribute, when given. */
  sizes?: string;
  /** The `media` attribute of a <source>. */
  media?: string;
  /** The `type` attribute of a <source>. */
  type?: string;
}

export interface ImageChoice {
  /** In document order: the <source>s of a <picture>, then the <img> (always last). */
  sources: ImageSource[];
}

export interface PageFacts {
  tags: Set<string>;
  ids: Set<string>;
  classes: Set<string>;
  attributes: Set<string>;
  /** Code points of the page's text (at most MAX_TEXT_CHARS characters read). */
  codePoints: Set<number>;
  /** Resolved URLs of the page's <link rel=stylesheet> (not alternate), in order. */
  stylesheets: string[];
  /** Texts of the page's <style> elements, in order (they resolve against the base URL). */
  inlineSheets: string[];
  imageChoices: ImageChoice[];
}

/** Text read for code points: enough for any page's visible text, bounded for huge ones. */
const MAX_TEXT_CHARS = 200_000;

export interface PageCollector {
  facts: PageFacts;
  /** Records one element's name, id, classes and attribute names. */
  element(name: string, attribs: Record<string, string>): void;
  /** Records the code points of a text node. */
  text(text: string): void;
}

export function createPageCollector(): PageCollector {
  const facts: PageFacts = {
    tags: new Set(),
    ids: new Set(),
    classes: new Set(),
    attributes: new Set(),
    codePoints: new Set(),
    stylesheets: [],
    inlineSheets: [],
    imageChoices: [],
  };
  let textBudget = MAX_TEXT_CHARS;
  return {
    facts,
    element(name, attribs) {
      facts.tags.add(name);
      for (const [attribute, value] of Object.entries(attribs)) {
        facts.attributes.add(attribute.toLowerCase());
        if (attribute === 'id' && value !== '') facts.ids.add(value);
        else if (attribute === 'class') for (const token of value.split(/\s+/)) if (token !== '') facts.classes.add(token);
      }
    },
    text(text) {
      if (textBudget <= 0) return;
      const slice = text.length > textBudget ? text.slice(0, textBudget) : text;
      textBudget -= slice.length;
      for (const char of slice) {
        const codePoint = char.codePointAt(0);
        if (codePoint !== undefined && codePoint > 0x20) facts.codePoints.add(codePoint);
      }
    },
  };
}
