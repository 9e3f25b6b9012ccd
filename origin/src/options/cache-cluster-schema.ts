/**
 * Options of the cooperative layer of the memory cache (cache/cluster/): spread into the
 * plugin's schema (plugin-schema.ts). They act only when the memory cache is on
 * (`memoryCacheBytes` > 0) and the server has peers and a cluster secret. Counts age with
 * the constant `memoryCacheAgingIntervalMs` (options/internals.ts, with the cache's other GOS
 * constants). Parameter names follow GOS (Chen, Wang, Lau,
 * Sections 4.3–4.5) and IBM's accelerator (Song et al. 2002, Section 3.2).
 */
import { Type } from 'typebox';
import { defaulted } from './resolved.js';

export const cacheClusterOptions = {
  memoryCacheCooperative: defaulted(
    Type.Boolean({
      default: true,
      description:
        "Share the memory caches of the cluster ([cooperative cache](#cooperative-cache)): a local miss asks the object's home server before disk or upstream. Needs `memoryCacheBytes`, `peers` and `clusterSecret`; `false` keeps each server's cache to itself.",
      cli: { group: 'Behaviour' },
    }),
  ),
};
