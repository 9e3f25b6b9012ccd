/**
 * Options of the cooperative layer of the memory cache (cache/cluster/): spread into the
 * plugin's schema (plugin-schema.ts). They act only when the memory cache is on
 * (`memoryCacheBytes` > 0) and the server has peers and a cluster secret. Counts age with
 * `memoryCacheAgingIntervalMs`. Parameter names follow GOS (Chen, Wang, Lau,
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
  memoryCacheReportIntervalMs: defaulted(
    Type.Integer({
      minimum: 50,
      maximum: 3_600_000,
      default: 1000,
      description: "Period of the local access-count reports to each object's home (GOS's LAC reports); also the retry period of unacknowledged invalidations and the probe period of a peer marked down.",
      cli: { group: 'Limits and tuning' },
    }),
  ),
  memoryCacheReportThreshold: defaulted(
    Type.Integer({ minimum: 1, maximum: 1_000_000, default: 32, description: "A local count reaching this many hits is reported to the object's home at once.", cli: { group: 'Limits and tuning' } }),
  ),
  memoryCacheHotShare: defaulted(
    Type.Number({
      exclusiveMinimum: 0,
      maximum: 1,
      default: 0.1,
      description: 'Objects whose global count is in this top share of the counts a server knows are hot: kept on `memoryCacheHotCopies` servers, not only on their home.',
      cli: { group: 'Limits and tuning' },
    }),
  ),
  memoryCacheHotCopies: defaulted(
    Type.Integer({ minimum: 1, maximum: 256, default: 3, description: 'How many servers (the best-ranked by rendezvous hashing, the home first) keep a copy of a hot object.', cli: { group: 'Limits and tuning' } }),
  ),
  memoryCacheRecirculation: defaulted(
    Type.Integer({
      minimum: 0,
      maximum: 8,
      default: 2,
      description: "Second chances of an evicted singlet: forwarded to a random peer up to this many times (GOS/xFS N-chance); `0`: none.",
      cli: { group: 'Limits and tuning' },
    }),
  ),
};
