/**
 * URLs referenced by a style sheet or an inline style: every `url(...)`, every
 * `@import "..."` and the strings of `image-set()` (paper Section 5.1 finds references in
 * HTML; CSS resources carry references of their own, which the worker must bind as well).
 * The text is parsed with css-tree (css-syntax.ts), so a `url(` inside a string or a
 * comment is not taken for a reference, and escapes are decoded as CSS decodes them.
 */
import { cssFacts, declarationFacts } from './css-syntax.js';

/** Raw (unresolved) URL strings in CSS text, in order of appearance, without duplicates. */
export function cssReferences(css: string): string[] {
  return cssFacts(css).references;
}

/** Raw URL strings of a `style` attribute (a declaration list). */
export function styleAttributeReferences(declarations: string): string[] {
  return declarationFacts(declarations).references;
}
