/**
 * URLs of a `srcset` / `imagesrcset` attribute, following the HTML standard's
 * "parse a srcset attribute" steps closely enough for URL extraction: candidates are
 * separated by commas, a URL runs to the next whitespace (trailing commas end the
 * candidate), and descriptors may contain parenthesised commas.
 */
export function srcsetUrls(value: string): string[] {
  const urls: string[] = [];
  let position = 0;
  const length = value.length;
  const isSpace = (char: string | undefined): boolean => char === ' ' || char === '\t' || char === '\n' || char === '\r' || char === '\f';
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
    if (url !== '') urls.push(url);
    if (endsCandidate) continue;
    let depth = 0;
    while (position < length) {
      const char = value[position];
      if (char === '(') depth += 1;
      else if (char === ')') depth = Math.max(0, depth - 1);
      else if (char === ',' && depth === 0) break;
      position += 1;
    }
  }
  return urls;
}
