/**
 * Every URL an HTML document references (paper Section 5.1, where the servlet matched
 * `HREF` and `SRC` with a regular expression; here the page is parsed with cheerio and
 * walked once). Covered: href, src, srcset / imagesrcset, poster, data, background,
 * xlink:href on any element — so <a>, <area>, <link> (stylesheet, preload, icon, …),
 * <script>, <img>, <source>, <track>, <video>, <audio>, <iframe>, <embed>, <object>,
 * SVG <image>/<use> — plus url() in style attributes and url() / @import in <style>.
 * The first <base href> sets the base URL, as browsers do.
 */
import { load } from 'cheerio/slim';
import { cssReferences } from './css-references.js';
import { srcsetUrls } from './srcset.js';
import { canonicalUrl } from '../directory/url-spec.js';

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

export interface HtmlReferences {
  /** The base URL references were resolved against (page URL or <base href>). */
  baseUrl: string;
  /** Absolute http(s) URLs without fragment, deduplicated, in document order. */
  urls: string[];
}

/** Parses `html` and returns the absolute URLs it references, resolved against `pageUrl`. */
export function htmlReferences(html: string, pageUrl: string): HtmlReferences {
  const $ = load(html);
  const root = $.root()[0] as unknown as DomNode;
  const raw: string[] = [];
  let baseHref: string | undefined;

  const visit = (node: DomNode): void => {
    const attribs = node.attribs;
    if (attribs !== undefined) {
      if (node.name === 'base') {
        if (baseHref === undefined && attribs.href !== undefined) baseHref = attribs.href;
      } else {
        for (const name of SINGLE_URL_ATTRIBUTES) {
          const value = attribs[name];
          if (value !== undefined) raw.push(value);
        }
        for (const name of SRCSET_ATTRIBUTES) {
          const value = attribs[name];
          if (value !== undefined) raw.push(...srcsetUrls(value));
        }
      }
      const style = attribs.style;
      if (style !== undefined && style.includes('url(')) raw.push(...cssReferences(style));
      if (node.name === 'style') {
        const css = (node.children ?? []).map((child) => child.data ?? '').join('');
        raw.push(...cssReferences(css));
        return;
      }
    }
    const children = node.children;
    if (children !== undefined) for (const child of children) visit(child);
  };
  visit(root);

  const baseUrl = (baseHref !== undefined ? canonicalUrl(baseHref.trim(), pageUrl) : undefined) ?? pageUrl;
  const urls = new Set<string>();
  for (const value of raw) {
    const trimmed = value.trim();
    if (trimmed === '' || trimmed.startsWith('#')) continue;
    const url = canonicalUrl(trimmed, baseUrl);
    if (url !== undefined) urls.add(url);
  }
  return { baseUrl, urls: [...urls] };
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
