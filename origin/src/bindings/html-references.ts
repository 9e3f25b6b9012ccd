/**
 * Every URL an HTML document references (paper Section 5.1, where the servlet matched
 * `HREF` and `SRC` with a regular expression; here the page is parsed with cheerio and
 * walked once). Covered: href, src, srcset / imagesrcset, poster, data, background,
 * xlink:href on any element — so <a>, <area>, <link> (stylesheet, preload, icon, …),
 * <script>, <img>, <source>, <track>, <video>, <audio>, <iframe>, <embed>, <object>,
 * SVG <image>/<use> — plus url() in style attributes and url() / @import / image-set() in
 * <style> (css-syntax.ts). The first <base href> sets the base URL, as browsers do.
 * Left out: whatever is inside <noscript> (never fetched while scripting is on, which is
 * when the worker runs) and <template> (inert until a script clones it), and the origins
 * of <link rel=preconnect|dns-prefetch> (no resource).
 *
 * The same walk also collects the page's embedded resources, i.e. what a browser fetches
 * to render it (paper Section 3.4: "all resources embedded in it"), which batch
 * transmission sends along with the page. That set is narrower: links to other pages
 * (<a>, <area>, <link rel=next>), frames (navigations of their own), audio/video
 * streams (fetched by byte range, and large) and <object data> / <embed src> (Chromium
 * fetches them past the service worker, so a batched copy would be fetched twice, issue
 * 25 §4) are not embedded resources. Responsive
 * images (srcset, <picture>) and what inline style sheets load are not in it either: the
 * browser fetches one candidate of each image and only the CSS resources the page uses,
 * so batching decides those with `page` facts (page-facts.ts).
 */
import { load } from 'cheerio/slim';
import { cssReferences, styleAttributeReferences } from './css-references.js';
import { createPageCollector, type ImageChoice, type ImageSource, type PageFacts } from './page-facts.js';
import { srcsetCandidates, srcsetUrls } from './srcset.js';
import { canonicalUrl } from '@webpp/core';

/** The few fields of a parsed node this walk needs (cheerio's DOM is domhandler's). */
interface DomNode {
  type: string;
  name?: string;
  attribs?: Record<string, string>;
  children?: DomNode[];
  data?: string;
}

const SINGLE_URL_ATTRIBUTES = ['href', 'src', 'poster', 'data', 'background', 'xlink:href'] as const;
const SRCSET_ATTRIBUTES = ['srcset', 'imagesrcset'] as const;
/** Subtrees whose references are never fetched while scripting is on (the worker's case). */
const INERT_ELEMENTS = new Set(['noscript', 'template']);
/** <link rel> values whose href is an origin to connect to, not a resource. */
const CONNECTION_RELS = new Set(['preconnect', 'dns-prefetch']);
/** <link rel> values whose target the browser fetches while rendering the page. */
const FETCHED_LINK_RELS = new Set(['stylesheet', 'icon', 'shortcut', 'preload', 'modulepreload']);
/** preload `as` values worth batching (not fetch/document/audio/video/track). */
const BATCHED_PRELOAD_AS = new Set(['image', 'style', 'script', 'font']);
/** <script type> values a browser runs (HTML §4.12.1.1); others are data blocks, never fetched. */
const SCRIPT_TYPES = /^(|module|(text|application)\/(x-)?(java|ecma)script|text\/(javascript1\.[0-5]|jscript|livescript))$/;

export interface HtmlReferences {
  /** The base URL references were resolved against (page URL or <base href>). */
  baseUrl: string;
  /** Absolute http(s) URLs without fragment, deduplicated, in document order. */
  urls: string[];
  /**
   * What the browser surely fetches to render the page (its embedded resources, paper
   * Section 3.4), without data: URLs and without the page itself; same form and order.
   */
  embeddedUrls: string[];
  /** With `{ page: true }`: facts for batching (responsive images resolved, inline CSS raw). */
  page?: PageFacts;
}

/** Raw attribute values of one element that surely name an embedded resource (not images with alternatives). */
function embeddedValues(name: string, attribs: Record<string, string>, inPicture: boolean, icons: string[]): string[] {
  switch (name) {
    case 'img':
      return attribs.srcset === undefined && !inPicture ? optional(attribs.src) : [];
    case 'input':
      return attribs.type?.toLowerCase() === 'image' ? optional(attribs.src) : [];
    case 'script':
      return attribs.nomodule === undefined && SCRIPT_TYPES.test((attribs.type ?? '').trim().toLowerCase()) ? optional(attribs.src) : [];
    case 'video':
      return optional(attribs.poster);
    case 'image':
      // SVG <image href> / <image xlink:href>.
      return optional(attribs.href ?? attribs['xlink:href']);
    case 'use': {
      // An SVG <use> of another document's symbol (a sprite); a local "#id" is no fetch.
      const href = attribs.href ?? attribs['xlink:href'];
      return href !== undefined && !href.trim().startsWith('#') ? [href] : [];
    }
    case 'link': {
      const rels = (attribs.rel ?? '').toLowerCase().split(/\s+/);
      const fetched = rels.some((rel) => FETCHED_LINK_RELS.has(rel)) && !rels.includes('alternate');
      const preloadOk = !rels.includes('preload') || BATCHED_PRELOAD_AS.has((attribs.as ?? '').toLowerCase());
      if (!fetched || !preloadOk || attribs.imagesrcset !== undefined) return [];
      // A browser fetches one icon of several, by its own preferences: only a lone icon is certain.
      if (rels.includes('icon') || rels.includes('shortcut')) {
        icons.push(...optional(attribs.href));
        return [];
      }
      return optional(attribs.href);
    }
    default:
      return [];
  }
}

function optional(value: string | undefined): string[] {
  return value === undefined ? [] : [value];
}

/** The source an <img> (or an image preload) offers: its srcset, plus src as 1x unless srcset has one (HTML §4.8.4.3.5). */
function imageSource(srcset: string | undefined, src: string | undefined, sizes: string | undefined): ImageSource {
  const candidates = srcset === undefined ? [] : srcsetCandidates(srcset);
  const hasDefault = candidates.some((candidate) => candidate.widthPx !== undefined || (candidate.density ?? 1) === 1);
  if (src !== undefined && src.trim() !== '' && !hasDefault) candidates.push({ url: src, density: 1 });
  return sizes === undefined ? { candidates } : { candidates, sizes };
}

/**
 * Parses `html` once and returns the absolute URLs it references and the subset it
 * embeds, resolved against `pageUrl` (or its <base href>).
 */
export function htmlReferences(html: string, pageUrl: string, options: { page?: boolean } = {}): HtmlReferences {
  const $ = load(html);
  const root = $.root()[0] as unknown as DomNode;
  const collector = options.page === true ? createPageCollector() : undefined;
  const raw: string[] = [];
  const rawEmbedded: string[] = [];
  const choices: ImageChoice[] = [];
  const rawSheets: string[] = [];
  let baseHref: string | undefined;
  const icons: string[] = [];

  const visit = (node: DomNode, picture: ImageChoice | undefined): void => {
    if (node.type === 'text' && collector !== undefined && node.data !== undefined) collector.text(node.data);
    const attribs = node.attribs;
    const name = node.name?.toLowerCase();
    if (attribs !== undefined && name !== undefined) {
      if (INERT_ELEMENTS.has(name)) return;
      collector?.element(name, attribs);
      if (name === 'base') {
        if (baseHref === undefined && attribs.href !== undefined) baseHref = attribs.href;
      } else {
        const connection = name === 'link' && (attribs.rel ?? '').toLowerCase().split(/\s+/).some((rel) => CONNECTION_RELS.has(rel));
        for (const attribute of SINGLE_URL_ATTRIBUTES) {
          const value = attribs[attribute];
          if (value !== undefined && !(connection && attribute === 'href')) raw.push(value);
        }
        for (const attribute of SRCSET_ATTRIBUTES) {
          const value = attribs[attribute];
          if (value !== undefined) raw.push(...srcsetUrls(value));
        }
        const embedded = embeddedValues(name, attribs, picture !== undefined, icons);
        rawEmbedded.push(...embedded);
        if (name === 'link' && embedded.length > 0 && /(^|\s)stylesheet(\s|$)/i.test(attribs.rel ?? '')) rawSheets.push(...embedded);
        if (name === 'source' && picture !== undefined && attribs.srcset !== undefined) {
          const source = imageSource(attribs.srcset, undefined, attribs.sizes);
          picture.sources.push({ ...source, ...(attribs.media === undefined ? {} : { media: attribs.media }), ...(attribs.type === undefined ? {} : { type: attribs.type }) });
        } else if (name === 'img' && (picture !== undefined || attribs.srcset !== undefined)) {
          const source = imageSource(attribs.srcset, attribs.src, attribs.sizes);
          if (picture !== undefined) picture.sources.push(source);
          else choices.push({ sources: [source] });
        } else if (name === 'link' && attribs.imagesrcset !== undefined && /\bpreload\b/i.test(attribs.rel ?? '')) {
          choices.push({ sources: [imageSource(attribs.imagesrcset, attribs.href, attribs.imagesizes)] });
        }
      }
      const style = attribs.style;
      if (style !== undefined && style.includes('url(')) {
        const styleUrls = styleAttributeReferences(style);
        raw.push(...styleUrls);
        rawEmbedded.push(...styleUrls);
      }
      if (name === 'style') {
        const css = (node.children ?? []).map((child) => child.data ?? '').join('');
        raw.push(...cssReferences(css));
        collector?.facts.inlineSheets.push(css);
        return;
      }
      if (name === 'script') return;
      if (name === 'picture') {
        const choice: ImageChoice = { sources: [] };
        for (const child of node.children ?? []) visit(child, choice);
        // Only a <picture> with its <img> shows anything (HTML §4.8.1).
        if (choice.sources.length > 0) choices.push(choice);
        return;
      }
    }
    const children = node.children;
    if (children !== undefined) for (const child of children) visit(child, picture);
  };
  visit(root, undefined);
  if (icons.length === 1) rawEmbedded.push(...icons);

  const baseUrl = (baseHref !== undefined ? canonicalUrl(baseHref.trim(), pageUrl) : undefined) ?? pageUrl;
  /** Resolved values, so that an embedded reference (also in `raw`) is parsed once. */
  const resolved = new Map<string, string | undefined>();
  const resolve = (value: string): string | undefined => {
    if (resolved.has(value)) return resolved.get(value);
    const trimmed = value.trim();
    const url = trimmed === '' || trimmed.startsWith('#') ? undefined : canonicalUrl(trimmed, baseUrl);
    resolved.set(value, url);
    return url;
  };
  const urls = new Set<string>();
  for (const value of raw) {
    const url = resolve(value);
    if (url !== undefined) urls.add(url);
  }
  const embeddedUrls = new Set<string>();
  for (const value of rawEmbedded) {
    if (/^\s*data:/i.test(value)) continue;
    const url = resolve(value);
    if (url !== undefined && url !== pageUrl) embeddedUrls.add(url);
  }
  const references: HtmlReferences = { baseUrl, urls: [...urls], embeddedUrls: [...embeddedUrls] };
  if (collector !== undefined) {
    collector.facts.imageChoices = choices.map((choice) => ({
      sources: choice.sources.map((source) => ({
        ...source,
        // A data: (or unusable) candidate stays, with no URL: choosing it fetches nothing.
        candidates: source.candidates.map((candidate) => ({ ...candidate, url: (/^\s*data:/i.test(candidate.url) ? undefined : resolve(candidate.url)) ?? '' })),
      })),
    }));
    collector.facts.stylesheets = rawSheets.flatMap((value) => optional(resolve(value)));
    references.page = collector.facts;
  }
  return references;
}

/** A reference (raw, as written) resolved against a base URL, or undefined (data:, not http(s), empty). */
export function resolveReference(value: string, baseUrl: string): string | undefined {
  const trimmed = value.trim();
  return trimmed === '' || /^data:/i.test(trimmed) ? undefined : canonicalUrl(trimmed, baseUrl);
}

/** htmlReferences with the page facts batching needs. */
export function pageReferences(html: string, pageUrl: string): HtmlReferences & { page: PageFacts } {
  const references = htmlReferences(html, pageUrl, { page: true });
  const page = references.page ?? createPageCollector().facts;
  return { ...references, page };
}

/** Absolute URLs referenced by a style sheet served at `sheetUrl`. */
export function cssReferenceUrls(css: string, sheetUrl: string): string[] {
  const urls = new Set<string>();
  for (const value of cssReferences(css)) {
    const url = canonicalUrl(value, sheetUrl);
    if (url !== undefined) urls.add(url);
  }
  return [...urls];
}
