/** A URL without its fragment (`#…`): what a request for it asks a server for. */
export function stripHash(url: string): string {
  const hash = url.indexOf('#');
  return hash === -1 ? url : url.slice(0, hash);
}
