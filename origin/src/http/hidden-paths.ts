/**
 * Files a site folder holds but does not publish: any path with a segment that starts with a
 * dot (`.env`, `.git/config`, `.npmrc`, `.htpasswd`), except `.well-known` (RFC 8615:
 * security.txt, ACME challenges, app links), which exists to be served. @fastify/static
 * serves dotfiles by default; the origin's own file readers (bindings/local-resource.ts)
 * already skip them, and `webpp-origin build` does not copy them to the folder it deploys.
 */
export function isHiddenPath(path: string): boolean {
  return path.split(/[/\\]/).some((segment) => segment.startsWith('.') && segment !== '.well-known' && segment !== '.' && segment !== '..');
}
