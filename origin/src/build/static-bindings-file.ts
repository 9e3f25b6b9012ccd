/**
 * The static bindings file (docs/protocol.md, "Static bindings file"): for hosts that cannot
 * set response headers (GitHub Pages, plain S3), the bindings the origin would have sent
 * with the site's pages, as a plain text file at STATIC_BINDINGS_PATH. Each line is one
 * bindings header value in the usual wire format (packages/core), at most `maxLineBytes`
 * long, so a worker decodes it with the same decoder as a header; together the lines hold
 * every binding of every page and stylesheet once. Unlike a header, the file has no size
 * limit: a large site simply gets more lines.
 */
import { encodeBindings, type Binding } from '@webpp/core';


/** Bindings in first-seen order, each (logical URL, prefix or exact) once. */
export function uniqueBindings(lists: Iterable<readonly Binding[]>): Binding[] {
  const byKey = new Map<string, Binding>();
  for (const list of lists) {
    for (const binding of list) {
      const key = `${binding.prefix ? 'p' : 'e'}${binding.logical}`;
      if (!byKey.has(key)) byKey.set(key, binding);
    }
  }
  return [...byKey.values()];
}

/**
 * Header values covering all `bindings`: each value holds as many bindings as fit in
 * `maxLineBytes` (the encoder drops from the end; the dropped ones start the next value).
 */
export function encodeBindingLines(bindings: readonly Binding[], directoryVersion: number, maxLineBytes: number): string[] {
  const lines: string[] = [];
  let rest = [...bindings];
  while (rest.length > 0) {
    const encoded = encodeBindings({ directoryVersion, bindings: rest }, { maxBytes: maxLineBytes });
    const kept = rest.length - encoded.droppedBindings;
    // One binding alone larger than a line: it cannot be sent in a header either.
    if (kept === 0) {
      rest = rest.slice(1);
      continue;
    }
    lines.push(encoded.value);
    rest = rest.slice(kept);
  }
  return lines;
}

/** The file's text: a comment line, then one header value per line. */
export function staticBindingsText(lines: readonly string[]): string {
  return `# webpp static bindings: one webpp-bindings header value per line (docs/protocol.md)\n${lines.map((line) => `${line}\n`).join('')}`;
}
