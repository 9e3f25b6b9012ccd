/**
 * The bundled worker's source map (sw/build.mjs: esbuild, then terser) leads from the
 * minified script to the TypeScript it came from, through both passes: a site owner reading
 * a stack trace, and the page-cost bench's `--profile` (which attributes worker time to source
 * files through it), depend on that. Reads sw/bundle/, which `npm run build` writes.
 */
import { readFileSync } from 'node:fs';
import { SourceMap, type SourceMapPayload } from 'node:module';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const bundleDir = join(import.meta.dirname, '..', 'bundle');

/** The 0-based line and column of the first occurrence of `needle` in `text`. */
function positionOf(text: string, needle: string): { line: number; column: number } {
  const index = text.indexOf(needle);
  expect(index, `"${needle}" in the bundle`).toBeGreaterThanOrEqual(0);
  const before = text.slice(0, index);
  return { line: before.split('\n').length - 1, column: index - (before.lastIndexOf('\n') + 1) };
}

describe('the default worker bundle', () => {
  const script = readFileSync(join(bundleDir, 'webpp-sw.js'), 'utf8');
  const payload = JSON.parse(readFileSync(join(bundleDir, 'webpp-sw.js.map'), 'utf8')) as SourceMapPayload;

  it('names its map, and the map carries every source it names', () => {
    expect(script.trimEnd().endsWith('//# sourceMappingURL=webpp-sw.js.map')).toBe(true);
    expect(payload.sources.length).toBeGreaterThan(50);
    expect(payload.sourcesContent).toHaveLength(payload.sources.length);
    expect(payload.sourcesContent.every((content) => typeof content === 'string' && content.length > 0)).toBe(true);
  });

  it('maps code in the minified script to the TypeScript source that wrote it', () => {
    const map = new SourceMap(payload);
    for (const [needle, source] of [
      ['all-replicas-failed', 'sw/src/error-page.ts'],
      ['registered no add-on', 'sw/src/addons.ts'],
      ['bindings header does not start with a format version', 'packages/core/src/bindings/decode.ts'],
    ] as const) {
      const { line, column } = positionOf(script, needle);
      const entry = map.findEntry(line, column) as { originalSource?: string };
      expect(entry.originalSource?.replace(/^(\.\.\/)+/, ''), needle).toBe(source.replace(/^sw\//, ''));
    }
  });
});

describe('the policies add-on bundle', () => {
  it('carries the paper\'s policies and the baselines, but not a second copy of the webpp policy that the default worker has', () => {
    const payload = JSON.parse(readFileSync(join(bundleDir, 'webpp-sw-policies.js.map'), 'utf8')) as SourceMapPayload;
    const sources = payload.sources.map((source) => source.replace(/^(\.\.\/)+/, ''));
    expect(sources).toContain('packages/core/src/policies/extended-refresh.ts');
    expect(sources).toContain('packages/core/src/policies/baselines.ts');
    expect(sources.filter((source) => source.includes('policies/webpp/'))).toEqual([]);
  });
});
