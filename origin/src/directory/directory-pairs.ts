/**
 * The pairs of the replication directory's document (replication-directory.ts): the Y.Map key
 * of a (logical, physical) pair and its value, the order replicas are bound in, and the
 * directory's version.
 */
import * as Y from 'yjs';
import { formatUrlSpec, parseUrlSpec, type UrlSpec } from '@webpp/core';
import type { AutomaticPlacement } from './automatic-placement.js';

/** Value stored for each (logical, physical) pair. */
export interface PairValue {
  addedAtMs: number;
  /** Present on replicas placed by load-driven replication (automatic-placement.ts). */
  automatic?: AutomaticPlacement;
}

/** Sum of the Yjs state-vector clocks (see `version`). */
export function computeVersion(doc: Y.Doc): number {
  let sum = 0;
  for (const clock of Y.decodeStateVector(Y.encodeStateVector(doc)).values()) sum += clock;
  return sum;
}

/** The Y.Map key of a pair: a JSON array, so that no URL character can make it ambiguous. */
export function pairKey(logical: string, physical: string): string {
  const logicalSpec = parseUrlSpec(logical);
  const physicalSpec = parseUrlSpec(physical);
  if (logicalSpec === undefined) throw new TypeError(`Not an absolute http(s) URL or "/*" prefix: ${logical}`);
  if (physicalSpec === undefined) throw new TypeError(`Not an absolute http(s) URL or "/*" prefix: ${physical}`);
  if (logicalSpec.prefix !== physicalSpec.prefix) {
    throw new TypeError(`A prefix entry needs prefix replicas and vice versa: ${logical} -> ${physical}`);
  }
  return JSON.stringify([formatUrlSpec(logicalSpec), formatUrlSpec(physicalSpec)]);
}

export function parsePairKey(key: string): [UrlSpec, UrlSpec] | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(key);
  } catch {
    return undefined;
  }
  if (!Array.isArray(parsed) || parsed.length !== 2) return undefined;
  const [logical, physical] = parsed as unknown[];
  if (typeof logical !== 'string' || typeof physical !== 'string') return undefined;
  const logicalSpec = parseUrlSpec(logical);
  const physicalSpec = parseUrlSpec(physical);
  if (logicalSpec === undefined || physicalSpec === undefined || logicalSpec.prefix !== physicalSpec.prefix) return undefined;
  return [logicalSpec, physicalSpec];
}

/**
 * Binding order: the replica at the logical URL itself (the primary copy) first, then by
 * URL. Deterministic, so that every converged server emits identical bindings.
 */
export function orderReplicas(logical: string, replicas: Map<string, PairValue>): string[] {
  return [...replicas.keys()].sort((a, b) => {
    if (a === logical) return -1;
    if (b === logical) return 1;
    return a < b ? -1 : a > b ? 1 : 0;
  });
}

export function smallest(values: Set<string>): string {
  let best: string | undefined;
  for (const value of values) if (best === undefined || value < best) best = value;
  return best as string;
}
