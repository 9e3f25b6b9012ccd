/**
 * What an opt-in feature's plugin (features/*.ts) takes from webppOrigin: the parts of the
 * server it is registered on (compose/parts.ts), under a private decorator. A feature is
 * registered after webppOrigin (its fastify-plugin `dependencies` say so), by the app or by
 * webppOrigin itself for the feature's option.
 */
import type { FastifyInstance } from 'fastify';
import { WEBPP_ERR_BAD_OPTIONS } from '../errors.js';
import type { OriginParts } from '../compose/parts.js';
import type { ResolvedOptions } from '../options.js';
import { compileOptions, optionPath } from '../options/compile-options.js';
import type { TObject } from 'typebox';
import type { Resolved } from '../options/resolved.js';

const kOriginParts = Symbol.for('webpp.origin.parts');

/** The fastify-plugin metadata every feature shares. */
export const FEATURE_PLUGIN = { fastify: '5.x', dependencies: ['@webpp/origin'] };

export function declareOriginParts(app: FastifyInstance, parts: OriginParts): void {
  app.decorate(kOriginParts, parts);
}

export function originPartsOf(app: FastifyInstance, feature: string): OriginParts {
  if (!app.hasDecorator(kOriginParts)) throw new WEBPP_ERR_BAD_OPTIONS(`${feature}: register webppOrigin (@webpp/origin) first`);
  return (app as unknown as Record<symbol, OriginParts>)[kOriginParts] as OriginParts;
}

/** The features registered on each server's parts, to refuse a second registration. */
const registered = new WeakMap<OriginParts, Set<string>>();

/** Records that `feature` is registered on this server; a second registration is refused (by option and by plugin, or twice by the app). */
export function claimFeature(parts: OriginParts, feature: string): void {
  const features = registered.get(parts) ?? new Set<string>();
  if (features.has(feature)) throw new WEBPP_ERR_BAD_OPTIONS(`${feature} is registered twice: register a feature either by its option to webppOrigin or as a plugin, once`);
  registered.set(parts, features.add(feature));
}

/** Adds a feature's resolved options to what `app.webpp.options` shows. */
export function showFeatureOptions(parts: OriginParts, options: Partial<ResolvedOptions>): void {
  parts.optionsInForce = { ...parts.optionsInForce, ...options };
}

/** The feature's options, checked against its schema with defaults filled in; throws WEBPP_ERR_BAD_OPTIONS naming each problem. */
export function featureOptionsResolver<S extends TObject>(schema: S, feature: string): (options: object) => Resolved<S> {
  const validator = compileOptions<Resolved<S>>(schema);
  return (options) => {
    const checked = validator.check(options, optionPath(feature));
    if (!checked.ok) throw new WEBPP_ERR_BAD_OPTIONS(checked.problems.join('; '));
    return checked.value;
  };
}
