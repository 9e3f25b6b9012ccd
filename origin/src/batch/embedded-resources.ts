/**
 * The resources a page embeds, i.e. what a browser fetches to render it (paper Section 3.4:
 * "all resources embedded in it"). Narrower than the references that get bindings
 * (bindings/html-references.ts): links to other pages (<a>, <area>, <link rel=next>),
 * frames (navigations of their own) and audio/video streams (fetched by byte range, and
 * large) are not embedded resources and never go into a batch.
 */
import { load } from 'cheerio/slim';
import { canonicalUrl } from '../directory/url-spec.js';
import { cssReferences } from '../bindings/css-references.js';
import { srcsetUrls } from '../bindings/srcset.js';

interface DomNode {
  type: string;
  name?: string;
  attribs?: Record<string, string>;
  children?: DomNode[];
  data?: string;
}

/** <link rel> values whose target the browser fetches while rendering the page. */
const FETCHED_LINK_RELS = new Set(['stylesheet', 'icon', 'shortcut', 'apple-touch-icon', 'preload', 'modulepreload']);
/** preload `as` values worth batching (not fetch/document/audio/video/track). */
const BATCHED_PRELOAD_AS = new Set(['image', 'style', 'script', 'font']);

/** Absolute URLs (no fragment) of the resources `html` embeds, deduplicated, in document order. */
export function embeddedResourceUrls(html: string, pageUrl: string): string[] {
  const $ = load(html);
  const raw: string[] = [];
  let baseHref: string | undefined;

  const visit = (node: DomNode): void => {
    const name = node.name?.toLowerCase();
    const attribs = node.attribs;
    if (attribs !== undefined && name !== undefined) {
      switch (name) {
        case 'base':
          if (baseHref === undefined && attribs.href !== undefined) baseHref = attribs.href;
          break;
        case 'img':
          if (attribs.src !== undefined) raw.push(attribs.src);
          if (attribs.srcset !== undefined) raw.push(...srcsetUrls(attribs.srcset));
          break;
        case 'source':
          // Only <picture> sources carry srcset; <video>/<audio> sources (src) are streams.
          if (attribs.srcset !== undefined) raw.push(...srcsetUrls(attribs.srcset));
          break;
        case 'input':
          if (attribs.type?.toLowerCase() === 'image' && attribs.src !== undefined) raw.push(attribs.src);
          break;
        case 'script':
          if (attribs.src !== undefined) raw.push(attribs.src);
          break;
        case 'video':
          if (attribs.poster !== undefined) raw.push(attribs.poster);
          break;
        case 'image':
          // SVG <image href> / <image xlink:href>.
          if (attribs.href !== undefined) raw.push(attribs.href);
          else if (attribs['xlink:href'] !== undefined) raw.push(attribs['xlink:href']);
          break;
        case 'link': {
          const rels = (attribs.rel ?? '').toLowerCase().split(/\s+/);
          const fetched = rels.some((rel) => FETCHED_LINK_RELS.has(rel)) && !rels.includes('alternate');
          const preloadOk = !rels.includes('preload') || BATCHED_PRELOAD_AS.has((attribs.as ?? '').toLowerCase());
          if (fetched && preloadOk && attribs.href !== undefined) raw.push(attribs.href);
          if (fetched && preloadOk && attribs.imagesrcset !== undefined) raw.push(...srcsetUrls(attribs.imagesrcset));
          break;
        }
        case 'style':
          raw.push(...cssReferences((node.children ?? []).map((child) => child.data ?? '').join('')));
          return;
        default:
          break;
      }
      if (attribs.style?.includes('url(')) raw.push(...cssReferences(attribs.style));
    }
    for (const child of node.children ?? []) visit(child);
  };
  visit($.root()[0] as unknown as DomNode);

  const baseUrl = (baseHref !== undefined ? canonicalUrl(baseHref.trim(), pageUrl) : undefined) ?? pageUrl;
  const urls = new Set<string>();
  for (const value of raw) {
    const trimmed = value.trim();
    if (trimmed === '' || trimmed.startsWith('#') || /^data:/i.test(trimmed)) continue;
    const url = canonicalUrl(trimmed, baseUrl);
    if (url !== undefined && url !== pageUrl) urls.add(url);
  }
  return [...urls];
}
