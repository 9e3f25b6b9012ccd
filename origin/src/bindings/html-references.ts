/**
 * Every URL an HTML document references (paper Section 5.1, where the servlet matched
 * `HREF` and `SRC` with a regular expression; here the page is parsed with cheerio and
 * walked once). Covered: href, src, srcset / imagesrcset, poster, data, background,
 * xlink:href on any element — so <a>, <area>, <link> (stylesheet, preload, icon, …),
 * <script>, <img>, <source>, <track>, <video>, <audio>, <iframe>, <embed>, <object>,
 * SVG <image>/<use> — plus url() in style attributes and url() / @import in <style>.
 * The first <base href> sets the base URL, as browsers do.
 *
 * The same walk also collects the page's embedded resources, i.e. what a browser fetches
 * to render it (paper Section 3.4: "all resources embedded in it"), which batch
 * transmission sends along with the page. That set is narrower: links to other pages
 * (<a>, <area>, <link rel=next>), frames (navigations of their own) and audio/video
 * streams (fetched by byte range, and large) are not embedded resources.
 */
import { load } from 'cheerio/slim';
import { cssReferences } from './css-references.js';
import { srcsetUrls } from './srcset.js';
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

/** <link rel> values whose target the browser fetches while rendering the page. */
const FETCHED_LINK_RELS = new Set(['stylesheet', 'icon', 'shortcut', 'apple-touch-icon', 'preload', 'modulepreload']);
/** preload `as` values worth batching (not fetch/document/audio/video/track). */
const BATCHED_PRELOAD_AS = new Set(['image', 'style', 'script', 'font']);

export interface HtmlReferences {
  /** The base URL references were resolved against (page URL or <base href>). */
  baseUrl: string;
  /** Absolute http(s) URLs without fragment, deduplicated, in document order. */
  urls: string[];
  /**
   * The subset the browser fetches to render the page (its embedded resources, paper
   * Section 3.4), without data: URLs and without the page itself; same form and order.
   */
  embeddedUrls: string[];
}

/** Raw attribute values of one element that name an embedded resource (not style/url()). */
function embeddedValues(name: string, attribs: Record<string, string>): string[] {
  switch (name) {
    case 'img':
      return [...optional(attribs.src), ...(attribs.srcset === undefined ? [] : srcsetUrls(attribs.srcset))];
    case 'source':
      // Only <picture> sources carry srcset; <video>/<audio> sources (src) are streams.
      return attribs.srcset === undefined ? [] : srcsetUrls(attribs.srcset);
    case 'input':
      return attribs.type?.toLowerCase() === 'image' ? optional(attribs.src) : [];
    case 'script':
      return optional(attribs.src);
    case 'video':
      return optional(attribs.poster);
    case 'image':
      // SVG <image href> / <image xlink:href>.
      return optional(attribs.href ?? attribs['xlink:href']);
    case 'link': {
      const rels = (attribs.rel ?? '').toLowerCase().split(/\s+/);
      const fetched = rels.some((rel) => FETCHED_LINK_RELS.has(rel)) && !rels.includes('alternate');
      const preloadOk = !rels.includes('preload') || BATCHED_PRELOAD_AS.has((attribs.as ?? '').toLowerCase());
      if (!fetched || !preloadOk) return [];
      return [...optional(attribs.href), ...(attribs.imagesrcset === undefined ? [] : srcsetUrls(attribs.imagesrcset))];
    }
    default:
      return [];
  }
}

function optional(value: string | undefined): string[] {
  return value === undefined ? [] : [value];
}

/**
 * Parses `html` once and returns the absolute URLs it references and the subset it
 * embeds, resolved against `pageUrl` (or its <base href>).
 */
export function htmlReferences(html: string, pageUrl: string): HtmlReferences {
  const $ = load(html);
  const root = $.root()[0] as unknown as DomNode;
  const raw: string[] = [];
  const rawEmbedded: string[] = [];
  let baseHref: string | undefined;

  const visit = (node: DomNode): void => {
    const attribs = node.attribs;
    const name = node.name?.toLowerCase();
    if (attribs !== undefined && name !== undefined) {
      if (name === 'base') {
        if (baseHref === undefined && attribs.href !== undefined) baseHref = attribs.href;
      } else {
        for (const attribute of SINGLE_URL_ATTRIBUTES) {
          const value = attribs[attribute];
          if (value !== undefined) raw.push(value);
        }
        for (const attribute of SRCSET_ATTRIBUTES) {
          const value = attribs[attribute];
          if (value !== undefined) raw.push(...srcsetUrls(value));
        }
        rawEmbedded.push(...embeddedValues(name, attribs));
      }
      const style = attribs.style;
      if (style !== undefined && style.includes('url(')) {
        const styleUrls = cssReferences(style);
        raw.push(...styleUrls);
        rawEmbedded.push(...styleUrls);
      }
      if (name === 'style') {
        const css = (node.children ?? []).map((child) => child.data ?? '').join('');
        const sheetUrls = cssReferences(css);
        raw.push(...sheetUrls);
        rawEmbedded.push(...sheetUrls);
        return;
      }
    }
    const children = node.children;
    if (children !== undefined) for (const child of children) visit(child);
  };
  visit(root);

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
  return { baseUrl, urls: [...urls], embeddedUrls: [...embeddedUrls] };
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
