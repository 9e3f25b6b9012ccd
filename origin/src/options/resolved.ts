/**
 * Types derived from an options schema: what callers pass (`Static<>`: everything not
 * required is optional) and what the code reads after validation (every option that has a
 * default is present; the others may be undefined).
 */
import { Type, type Static, type TObject, type TOptional, type TSchema } from 'typebox';

/**
 * An optional option with a default: `defaulted(Type.Integer({ default: 5 }))`. Marks the
 * default in the type (TypeBox keeps it only at run time), so that Resolved<> makes it required.
 */
export function defaulted<S extends TSchema>(schema: S): TOptional<S & { default: Static<S> }> {
  if (!('default' in schema)) throw new TypeError('defaulted(): the schema has no default');
  return Type.Optional(schema) as TOptional<S & { default: Static<S> }>;
}

/** The options after validation: required and defaulted ones are always set, the others may be undefined. */
export type Resolved<S extends TObject> = {
  [K in keyof S['properties']]-?: S['properties'][K] extends { default: unknown }
    ? Exclude<Static<S['properties'][K]>, undefined>
    : S['properties'][K] extends TOptional<TSchema>
      ? Static<S['properties'][K]> | undefined
      : Static<S['properties'][K]>;
};
