/**
 * Validation of an options object against its TypeBox schema with Ajv (the validator
 * Fastify itself uses), filling in every `default` of the schema. Errors name the option
 * as the caller wrote it ("options.maxReplicaBytes must be >= 1"), or as the caller's
 * caller knows it (the CLI passes its flag names).
 */
import { Ajv, type ErrorObject } from 'ajv';
import type { TSchema } from 'typebox';
import { ANNOTATION_KEYWORDS } from './annotations.js';

const ajv = new Ajv({ allErrors: true, useDefaults: true, strict: true, verbose: true });
ajv.addVocabulary([...ANNOTATION_KEYWORDS]);

/** Names a value by its JSON path: "options.batch.maxParts" by default. */
export type PathNamer = (path: string[]) => string;

export const optionPath =
  (root: string): PathNamer =>
  (path) =>
    [root, ...path].join('.');

/** One Ajv error as a sentence that starts with the offending option's name. */
function describeError(error: ErrorObject, name: PathNamer): string {
  const path = error.instancePath === '' ? [] : error.instancePath.slice(1).split('/');
  const params = error.params as { additionalProperty?: string; missingProperty?: string; allowedValues?: unknown[] };
  if (error.keyword === 'additionalProperties') return `${name([...path, String(params.additionalProperty)])} is not an option`;
  if (error.keyword === 'required') return `${name([...path, String(params.missingProperty)])} is required`;
  if (error.keyword === 'enum') return `${name(path)} must be one of ${(params.allowedValues ?? []).map((value) => JSON.stringify(value)).join(', ')}`;
  const patternText = (error.parentSchema as { patternText?: string } | undefined)?.patternText;
  if (error.keyword === 'pattern' && patternText !== undefined) return `${name(path)} must be ${patternText}`;
  return `${name(path)} ${error.message ?? 'is invalid'}`;
}

export interface OptionsValidator<Resolved> {
  /** Copies the input, drops keys whose value is undefined, checks it and fills in defaults; returns the problems, or the options. */
  check(input: object, name: PathNamer): { ok: true; value: Resolved } | { ok: false; problems: string[] };
}

/** Compiles `schema` once; `check` never mutates its input. */
export function compileOptions<Resolved>(schema: TSchema): OptionsValidator<Resolved> {
  const validate = ajv.compile(schema);
  return {
    check(input, name) {
      const copy = Object.fromEntries(Object.entries(input ?? {}).filter(([, value]) => value !== undefined));
      if (validate(copy)) return { ok: true, value: copy as Resolved };
      // anyOf reports one error per branch plus its own; the branches say more.
      const errors = (validate.errors ?? []).filter((error) => error.keyword !== 'anyOf');
      return { ok: false, problems: [...new Set(errors.map((error) => describeError(error, name)))] };
    },
  };
}
