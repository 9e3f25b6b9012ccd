/**
 * Candidates of a `srcset` / `imagesrcset` attribute, following the HTML standard's
 * "parse a srcset attribute" steps closely enough for URL extraction: candidates are
 * separated by commas, a URL runs to the next whitespace (trailing commas end the
 * candidate), and descriptors may contain parenthesised commas.
 */

export interface SrcsetCandidate {
  /** The raw URL. */
  url: string;
  /** Width descriptor (`480w`), in CSS pixels of the image's intrinsic width. */
  widthPx?: number;
  /** Pixel density descriptor (`2x`); neither descriptor means 1x. */
  density?: number;
}

const isSpace = (char: string | undefined): boolean => char === ' ' || char === '\t' || char === '\n' || char === '\r' || char === '\f';

/** Every candidate of a srcset value, in order. */
export function srcsetCandidates(value: string): SrcsetCandidate[] {
  const candidates: SrcsetCandidate[] = [];
  let position = 0;
  const length = value.length;
  while (position < length) {
    while (position < length && (isSpace(value[position]) || value[position] === ',')) position += 1;
    if (position >= length) break;
    const start = position;
    while (position < length && !isSpace(value[position])) position += 1;
    let url = value.slice(start, position);
    let endsCandidate = false;
    if (url.endsWith(',')) {
      url = url.replace(/,+$/, '');
      endsCandidate = true;
    }
    const descriptorStart = position;
    if (!endsCandidate) {
      let depth = 0;
      while (position < length) {
        const char = value[position];
        if (char === '(') depth += 1;
        else if (char === ')') depth = Math.max(0, depth - 1);
        else if (char === ',' && depth === 0) break;
        position += 1;
      }
    }
    if (url !== '') candidates.push({ url, ...descriptors(value.slice(descriptorStart, position)) });
  }
  return candidates;
}

/** URLs of a srcset value, in order. */
export function srcsetUrls(value: string): string[] {
  return srcsetCandidates(value).map((candidate) => candidate.url);
}

function descriptors(text: string): Pick<SrcsetCandidate, 'widthPx' | 'density'> {
  for (const token of text.trim().split(/\s+/)) {
    const match = /^(\d+(?:\.\d+)?)([wx])$/i.exec(token);
    if (match === null) continue;
    const number = Number(match[1]);
    return match[2]?.toLowerCase() === 'w' ? { widthPx: number } : { density: number };
  }
  return {};
}
