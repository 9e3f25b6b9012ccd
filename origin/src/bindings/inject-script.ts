/**
 * Inserts `<script src="/webpp.js" async></script>` into an HTML page (paper Section 2: "The
 * servers also embed a reference to the Web++ client applet within each HTML resource").
 * The tag is spliced into the original text right after <head> (else after <html>, else
 * after the doctype, else at the start), so the rest of the page stays byte-for-byte
 * identical. `async` keeps the tag from blocking rendering (the page script only registers
 * the worker). Pages that already load the script are left alone. `scriptPath` may carry
 * a query, the worker's options (`/webpp.js?features=batch`); whether a page already loads
 * the script is judged by the path alone.
 */

function scriptTag(scriptPath: string): string {
  return `<script src="${escapeAttribute(scriptPath)}" async></script>`;
}

export function injectScriptTag(html: string, scriptPath: string): string {
  if (alreadyLoads(html, scriptPath.split('?')[0] as string)) return html;
  const tag = scriptTag(scriptPath);
  for (const pattern of [/<head(?:\s[^>]*)?>/i, /<html(?:\s[^>]*)?>/i, /<!doctype[^>]*>/i]) {
    const match = pattern.exec(html);
    if (match !== null) {
      const at = match.index + match[0].length;
      return html.slice(0, at) + tag + html.slice(at);
    }
  }
  return tag + html;
}

/**
 * The page has a script tag for the page script already: `src` is the path, the same path
 * on an origin (`https://example.org/webpp.js`, `//example.org/webpp.js`), or, written
 * relative to the root page, the path without its leading slash (`webpp.js?features=batch`).
 * A second tag would register a second worker URL, and the two would replace each other.
 */
function alreadyLoads(html: string, scriptPath: string): boolean {
  const relative = scriptPath.replace(/^\//, '');
  if (!html.includes(relative)) return false;
  const escaped = relative.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  return new RegExp(`<script\\b[^>]*\\bsrc\\s*=\\s*["']?(?:(?:https?:)?//[^/"'\\s>]+)?/?${escaped}(?:["'\\s>?#])`, 'i').test(html);
}

function escapeAttribute(value: string): string {
  return value.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;');
}
