/**
 * Words for an option's default and description, shared by `--help` (plain text) and the
 * docs tables (Markdown).
 */
import type { TSchema } from 'typebox';
import type { OptionAnnotations } from './annotations.js';

export type AnnotatedSchema = TSchema & Partial<OptionAnnotations> & { default?: unknown; type?: unknown; anyOf?: TSchema[]; enum?: unknown[] };

const KiB = 1024;

/** 52428800 → "50 MiB", 16384 → "16 KiB"; undefined when not a whole number of KiB or MiB. */
function binaryUnits(bytes: number): string | undefined {
  if (bytes >= KiB * KiB && bytes % (KiB * KiB) === 0) return `${bytes / (KiB * KiB)} MiB`;
  if (bytes >= KiB && bytes % KiB === 0 && bytes !== KiB) return `${bytes / KiB} KiB`;
  return undefined;
}

/** The default of an option as a Markdown table cell, or undefined when it has none. */
export function defaultMarkdown(name: string, schema: AnnotatedSchema): string | undefined {
  if (schema.defaultText !== undefined) return schema.defaultText;
  const value = schema.default;
  if (value === undefined) return undefined;
  const units = typeof value === 'number' && /Bytes$/.test(name) ? binaryUnits(value) : undefined;
  const literal = typeof value === 'string' ? `\`'${value}'\`` : `\`${JSON.stringify(value)}\``;
  return units === undefined ? literal : `${literal} (${units})`;
}

/** Markdown to plain text: links keep their words, code loses its backticks. */
export function plainText(markdown: string): string {
  return markdown.replace(/\[([^\]]+)\]\([^)]*\)/g, '$1').replace(/`([^`]*)`/g, '$1');
}

/** The default in --help: "52428800 = 50 MiB", "replicated", "[]" is left out. */
export function defaultPlain(name: string, value: unknown): string | undefined {
  if (value === undefined || (Array.isArray(value) && value.length === 0)) return undefined;
  if (typeof value === 'number' && /Bytes$/.test(name)) {
    const units = binaryUnits(value);
    return units === undefined ? String(value) : `${value} = ${units}`;
  }
  return typeof value === 'string' ? value : JSON.stringify(value);
}
