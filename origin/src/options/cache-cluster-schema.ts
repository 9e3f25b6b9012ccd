/**
 * Options of the cooperative layer of the memory cache (cache/cluster/): spread into the
 * plugin's schema (plugin-schema.ts). They act only when the memory cache is on and the
 * server has peers and a cluster secret. Parameter names follow GOS (Chen, Wang, Lau,
 * Sections 4.3–4.5) and IBM's accelerator (Song et al. 2002, Section 3.2).
 */
import { Type } from 'typebox';
import { defaulted } from './resolved.js';

export const cacheClusterOptions = {
  cacheCooperative: defaulted(
    Type.Boolean({
      default: true,
      description:
        "Share the memory caches of the cluster ([cooperative cache](#cooperative-cache)): a local miss asks the object's home server before disk or upstream. Needs `peers` and `clusterSecret`; `false` keeps each server's cache to itself.",
      cli: { group: 'Behaviour' },
    }),
  ),
  cacheReportIntervalMs: defaulted(
    Type.Integer({
      minimum: 50,
      maximum: 3_600_000,
      default: 1000,
      description: "Period of the local access-count reports to each object's home (GOS's LAC reports); also the retry period of unacknowledged invalidations.",
      cli: { group: 'Limits and tuning' },
    }),
  ),
  cacheReportThreshold: defaulted(
    Type.Integer({ minimum: 1, maximum: 1_000_000, default: 32, description: "A local count reaching this many hits is reported to the object's home at once.", cli: { group: 'Limits and tuning' } }),
  ),
  cacheAgingIntervalMs: defaulted(
    Type.Integer({
      minimum: 0,
      maximum: 86_400_000,
      default: 60_000,
      description: 'The approximated global counts are halved every this many ms (GOS LFU-Aging); `0`: never.',
      cli: { group: 'Limits and tuning' },
    }),
  ),
  cacheHotCount: defaulted(
    Type.Integer({
      minimum: 1,
      maximum: 1_000_000_000,
      default: 16,
      description: 'An object whose global count reaches this is hot: kept on `cacheHotCopies` servers, not only on its home.',
      cli: { group: 'Limits and tuning' },
    }),
  ),
  cacheHotCopies: defaulted(
    Type.Integer({ minimum: 1, maximum: 256, default: 3, description: 'How many servers (the best-ranked by rendezvous hashing, the home first) keep a copy of a hot object.', cli: { group: 'Limits and tuning' } }),
  ),
  cacheRecirculation: defaulted(
    Type.Integer({
      minimum: 0,
      maximum: 8,
      default: 2,
      description: "Second chances of an evicted singlet: forwarded to a random peer up to this many times (GOS/xFS N-chance); `0`: none.",
      cli: { group: 'Limits and tuning' },
    }),
  ),
};
