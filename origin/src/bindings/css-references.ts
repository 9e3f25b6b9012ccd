/**
 * URLs referenced by a style sheet or an inline style: every `url(...)`, every
 * `@import "..."` and the strings of `image-set()` (paper Section 5.1 finds references in
 * HTML; CSS resources carry references of their own, which the worker must bind as well).
 *
 * This runs on the bindings path of every style sheet, so it reads the token stream of
 * css-tree's tokenizer (CSS Syntax Level 3) without building a tree: a `url(` inside a
 * string or a comment is not taken for a reference, and escapes are decoded as CSS does.
 * `@namespace` URLs name no resource and are skipped. Batching, which needs the sheet's
 * structure (selectors, @font-face), parses it whole (css-syntax.ts).
 */
import { string as cssString, tokenize, tokenTypes, url as cssUrl } from 'css-tree';

/** Raw (unresolved) URL strings in CSS text, in order of appearance, without duplicates. */
export function cssReferences(css: string): string[] {
  const found = new Set<string>();
  const add = (value: string): void => {
    const trimmed = value.trim();
    if (trimmed !== '') found.add(trimmed);
  };
  /** What the next string token is: the argument of url(), of @import, or inside image-set(). */
  let expectString: 'url' | 'import' | undefined;
  /** Parenthesis depth at which an image-set() opened (its strings are URLs), or -1. */
  let imageSetDepth = -1;
  let depth = 0;
  let inNamespace = false;
  tokenize(css, (type, start, end) => {
    if (type === tokenTypes.WhiteSpace || type === tokenTypes.Comment) return;
    const text = css.slice(start, end);
    if (inNamespace) {
      if (type === tokenTypes.Semicolon || type === tokenTypes.LeftCurlyBracket) inNamespace = false;
      return;
    }
    const expected = expectString;
    expectString = undefined;
    switch (type) {
      case tokenTypes.Url:
        add(cssUrl.decode(text));
        return;
      case tokenTypes.String:
        if (expected !== undefined || (imageSetDepth >= 0 && depth === imageSetDepth + 1)) add(cssString.decode(text));
        return;
      case tokenTypes.AtKeyword: {
        const name = text.toLowerCase();
        if (name === '@import') expectString = 'import';
        else if (name === '@namespace') inNamespace = true;
        return;
      }
      case tokenTypes.Function: {
        const name = text.slice(0, -1).toLowerCase();
        if (name === 'url' || name === 'src') expectString = 'url';
        else if ((name === 'image-set' || name === '-webkit-image-set') && imageSetDepth < 0) imageSetDepth = depth;
        depth += 1;
        return;
      }
      case tokenTypes.LeftParenthesis:
        depth += 1;
        return;
      case tokenTypes.RightParenthesis:
        depth = Math.max(0, depth - 1);
        if (depth === imageSetDepth) imageSetDepth = -1;
        return;
      default:
        return;
    }
  });
  return [...found];
}

/** Raw URL strings of a `style` attribute (a declaration list). */
export function styleAttributeReferences(declarations: string): string[] {
  return cssReferences(declarations);
}
