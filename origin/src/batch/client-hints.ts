/**
 * Which candidate of a responsive image the client will fetch, from its client hints
 * (RFC 8942; `Sec-CH-DPR` and `Sec-CH-Viewport-Width`, asked for with `Accept-CH` on the
 * page). A batch then carries that one candidate instead of all of them. Where the answer
 * depends on something the hints do not tell (no hints at all, a media feature other than
 * the width, `calc()` in `sizes`…), none is chosen: the browser fetches its pick itself.
 *
 * The steps are the HTML Standard's "select an image source" (§4.8.4.3.9: the first
 * <source> whose `type` is supported and whose `media` matches, then the <img>), "parse a
 * sizes attribute" (§4.8.4.3.11) and, among the candidates' densities, Chromium's choice
 * (Blink html_srcset_parser.cc, SelectionLogic: the lowest density not below the device
 * pixel ratio, or the one below it when the ratio is past the two's geometric mean).
 */
import type { ImageChoice, ImageSource } from '../bindings/page-facts.js';

export interface ClientHints {
  /** Device pixel ratio (Sec-CH-DPR). */
  dpr: number;
  /** Layout viewport width in CSS pixels (Sec-CH-Viewport-Width), when sent. */
  viewportWidthPx: number | undefined;
}

/** The `Accept-CH` value a page response asks for. */
export const ACCEPT_CH = 'Sec-CH-DPR, Sec-CH-Viewport-Width';
/** Request headers a batch depends on (for `Vary`). */
export const CLIENT_HINT_HEADERS = ['Sec-CH-DPR', 'Sec-CH-Viewport-Width'];

/** Image types Chromium decodes (its `Accept` for images); others are skipped in <picture>. */
const SUPPORTED_TYPES = new Set(['image/png', 'image/jpeg', 'image/jpg', 'image/gif', 'image/webp', 'image/avif', 'image/jxl', 'image/svg+xml', 'image/bmp', 'image/x-icon', 'image/vnd.microsoft.icon', 'image/apng']);
/** CSS `em` / `rem` in media queries and sizes: the initial font size (CSS Values 4 §6.1.1). */
const EM_PX = 16;

type Headers = Record<string, string | string[] | undefined>;

function header(headers: Headers, name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value[0] : value;
}

/** The hints of a request, or undefined when it sent no usable DPR. */
export function readClientHints(headers: Headers): ClientHints | undefined {
  const dpr = Number(header(headers, 'sec-ch-dpr') ?? header(headers, 'dpr'));
  if (!Number.isFinite(dpr) || dpr <= 0 || dpr > 16) return undefined;
  const width = Number(header(headers, 'sec-ch-viewport-width') ?? header(headers, 'viewport-width'));
  return { dpr, viewportWidthPx: Number.isFinite(width) && width > 0 && width < 100_000 ? width : undefined };
}

/**
 * The URL of the candidate the client will fetch, '' when it fetches nothing (a data:
 * candidate), or undefined when the hints cannot tell.
 */
export function chooseImage(choice: ImageChoice, hints: ClientHints | undefined): string | undefined {
  if (hints === undefined) return undefined;
  for (const source of choice.sources) {
    if (source.type !== undefined && !SUPPORTED_TYPES.has(source.type.split(';', 1)[0]?.trim().toLowerCase() ?? '')) continue;
    if (source.media !== undefined) {
      const matches = mediaMatches(source.media, hints);
      if (matches === undefined) return undefined;
      if (!matches) continue;
    }
    return chooseCandidate(source, hints);
  }
  return undefined;
}

function chooseCandidate(source: ImageSource, hints: ClientHints): string | undefined {
  if (source.candidates.length === 0) return undefined;
  let sizePx: number | undefined;
  const densities: Array<{ url: string; density: number }> = [];
  for (const candidate of source.candidates) {
    if (candidate.widthPx !== undefined) {
      sizePx ??= sourceSizePx(source.sizes ?? '100vw', hints);
      if (sizePx === undefined || sizePx <= 0) return undefined;
      densities.push({ url: candidate.url, density: candidate.widthPx / sizePx });
    } else {
      densities.push({ url: candidate.url, density: candidate.density ?? 1 });
    }
  }
  // Sorted by density; of equal densities the first one counts (HTML §4.8.4.3.5).
  const sorted = densities
    .map((entry, index) => ({ ...entry, index }))
    .sort((a, b) => a.density - b.density || a.index - b.index)
    .filter((entry, i, all) => i === 0 || entry.density !== all[i - 1]?.density);
  const dpr = hints.dpr;
  let i = 0;
  for (; i < sorted.length - 1; i++) {
    const current = sorted[i]?.density ?? 0;
    const next = sorted[i + 1]?.density ?? 0;
    if (next < dpr) continue;
    // Blink SelectionLogic: prefer the next (higher) density past the geometric mean.
    if ((dpr <= 1 && dpr > current) || dpr >= Math.sqrt(current * next)) return sorted[i + 1]?.url;
    break;
  }
  return sorted[i]?.url;
}

/** "parse a sizes attribute": the first size whose media condition matches; undefined when unknown. */
function sourceSizePx(sizes: string, hints: ClientHints): number | undefined {
  for (const entry of sizes.split(',')) {
    const text = entry.trim();
    const match = /^(.*?)\s*([\d.]+(?:px|vw|em|rem)|0)$/i.exec(text);
    if (match === null) return undefined;
    const condition = match[1]?.trim() ?? '';
    if (condition !== '') {
      const matches = mediaMatches(condition, hints);
      if (matches === undefined) return undefined;
      if (!matches) continue;
    }
    return lengthPx(match[2] ?? '', hints);
  }
  return lengthPx('100vw', hints);
}

function lengthPx(length: string, hints: ClientHints): number | undefined {
  const match = /^([\d.]+)(px|vw|em|rem)?$/i.exec(length.trim());
  if (match === null) return undefined;
  const value = Number(match[1]);
  const unit = match[2]?.toLowerCase() ?? 'px';
  if (unit === 'px') return value;
  if (unit === 'em' || unit === 'rem') return value * EM_PX;
  return hints.viewportWidthPx === undefined ? undefined : (value * hints.viewportWidthPx) / 100;
}

/** A media query list of width conditions (`screen and (min-width: 40em)`); undefined when it asks for more. */
function mediaMatches(media: string, hints: ClientHints): boolean | undefined {
  let result: boolean | undefined = false;
  for (const query of media.toLowerCase().split(',')) {
    const matches = queryMatches(query.trim(), hints);
    if (matches === true) return true;
    if (matches === undefined) result = undefined;
  }
  return result;
}

function queryMatches(query: string, hints: ClientHints): boolean | undefined {
  if (query === '' || query === 'all' || query === 'screen') return true;
  let matches = true;
  for (const part of query.split(/\s+and\s+/)) {
    const term = part.trim();
    if (term === 'screen' || term === 'all' || term === 'only screen') continue;
    if (term === 'print') return false;
    const feature = /^\(\s*(min|max)-width\s*:\s*([\d.]+(?:px|em|rem))\s*\)$/.exec(term);
    const widthPx = hints.viewportWidthPx;
    if (feature === null || widthPx === undefined) return undefined;
    const limit = lengthPx(feature[2] ?? '', hints);
    if (limit === undefined) return undefined;
    if (feature[1] === 'min' ? widthPx < limit : widthPx > limit) matches = false;
  }
  return matches;
}
