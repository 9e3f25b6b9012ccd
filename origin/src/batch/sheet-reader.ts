/**
 * Reads the style sheets of a page while its batch is planned (embedded-plan.ts): through
 * the server itself (the batch's ResourceReader), so a sheet is answered exactly as a
 * separate request would be. Each sheet's parse is kept per URL and validator, so an
 * unchanged sheet is parsed once (paper Section 5.1: the servlet cached its parses too).
 */
import { cssFacts, type CssFacts } from '../bindings/css-syntax.js';
import type { ReadSheet } from './embedded-plan.js';
import type { ResourceBody, ResourceReader } from './resource-reader.js';

/** Sheets whose parse is kept. */
const MAX_PARSED_SHEETS = 256;
/**
 * Longest wait for one sheet: the manifest (and so the page) waits for the sheets, so a
 * slow one is not followed (it is still sent, read like any other part).
 */
export const SHEET_READ_TIMEOUT_MS = 1000;
/** Larger sheets are sent (when small enough for a part) but not read for references. */
const MAX_SHEET_BYTES = 2 * 1024 * 1024;

export interface SheetReader {
  read(url: string, path: string, forward: Record<string, string>): Promise<ReadSheet<ResourceBody> | undefined>;
}

function isCss(resource: ResourceBody): boolean {
  const type = resource.headers.find(([name]) => name === 'content-type')?.[1];
  return type?.split(';', 1)[0]?.trim().toLowerCase() === 'text/css';
}

export function createSheetReader(reader: ResourceReader): SheetReader {
  const parsed = new Map<string, CssFacts>();
  return {
    async read(url, path, forward) {
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<undefined>((resolve) => {
        timer = setTimeout(() => resolve(undefined), SHEET_READ_TIMEOUT_MS);
      });
      const body = await Promise.race([reader.get(path, forward).catch(() => undefined), timeout]);
      clearTimeout(timer);
      if (body === undefined || body.status !== 200 || !isCss(body) || body.body.byteLength > MAX_SHEET_BYTES) return undefined;
      const key = body.validator === undefined ? undefined : `${url}\u0000${body.validator}`;
      let facts = key === undefined ? undefined : parsed.get(key);
      if (facts === undefined) {
        facts = cssFacts(body.body.toString('utf8'));
        if (key !== undefined) {
          if (parsed.size >= MAX_PARSED_SHEETS) parsed.delete(parsed.keys().next().value as string);
          parsed.set(key, facts);
        }
      }
      return { facts: { baseUrl: url, facts }, body };
    },
  };
}
