/**
 * The one rule for "is this an HTML page?", by path where no response is at hand (a Range
 * to drop before serving, a page to pin home, bytes that pre-processing rewrites), and by
 * Content-Type where one is.
 */

/** Extensions of files served as HTML (@fastify/static's types: html, htm, xhtml, xht, shtml). */
const PAGE_EXTENSION = /\.(?:x?html?|xht|shtml)$/i;

/**
 * A path that may name an HTML page: one ending in "/" (a folder's index.html), in a page
 * extension, or whose last segment has no extension (a route of an app).
 */
export function isPagePath(path: string): boolean {
  const last = path.slice(path.lastIndexOf('/') + 1);
  return last === '' || PAGE_EXTENSION.test(last) || !last.includes('.');
}

/** A Content-Type naming HTML or XHTML. */
export function isHtmlContentType(contentType: string | undefined): boolean {
  const mime = contentType?.split(';', 1)[0]?.trim().toLowerCase();
  return mime === 'text/html' || mime === 'application/xhtml+xml';
}
