/**
 * URLs referenced by a style sheet or an inline style: every `url(...)` and every
 * `@import "..."` (paper Section 5.1 finds references in HTML; CSS resources carry
 * references of their own, which the worker must bind as well).
 */

const COMMENT = /\/\*[\s\S]*?\*\//g;
// url( "a" ) | url('a') | url(a) — unquoted URLs stop at whitespace or ")".
const URL_FUNCTION = /url\(\s*(?:"((?:[^"\\\n]|\\.)*)"|'((?:[^'\\\n]|\\.)*)'|((?:[^\s"'()\\]|\\.)*))\s*\)/gi;
// @import "a" | @import 'a' (the url() form is caught by URL_FUNCTION).
const IMPORT_STRING = /@import\s+(?:"((?:[^"\\\n]|\\.)*)"|'((?:[^'\\\n]|\\.)*)')/gi;

/** Raw (unresolved) URL strings in CSS text, in order of appearance, without duplicates. */
export function cssReferences(css: string): string[] {
  const text = css.includes('/*') ? css.replace(COMMENT, ' ') : css;
  const found = new Set<string>();
  for (const pattern of [URL_FUNCTION, IMPORT_STRING]) {
    pattern.lastIndex = 0;
    for (let match = pattern.exec(text); match !== null; match = pattern.exec(text)) {
      const raw = match[1] ?? match[2] ?? match[3] ?? '';
      const value = unescapeCss(raw).trim();
      if (value !== '') found.add(value);
    }
  }
  return [...found];
}

/** CSS escapes: "\" + up to six hex digits (+ one optional space), or "\" + any character. */
function unescapeCss(value: string): string {
  if (!value.includes('\\')) return value;
  return value.replace(/\\(?:([0-9a-fA-F]{1,6})\s?|([\s\S]))/g, (_all, hex: string | undefined, char: string | undefined) => {
    if (hex !== undefined) {
      const codePoint = Number.parseInt(hex, 16);
      return codePoint === 0 || codePoint > 0x10ffff ? '\ufffd' : String.fromCodePoint(codePoint);
    }
    return char === '\n' ? '' : (char ?? '');
  });
}
