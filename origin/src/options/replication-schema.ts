/**
 * Options of load-driven replication (issue 14; DCWS, Baker and Moon 1998): the load
 * table, Algorithm 1's thresholds, the rate limits and the operator's limits. Defaults of
 * the T_* periods are the paper's Table 1; what each trades is its Table 2 (see
 * docs/origin.md, "Load-driven replication"). Composed into plugin-schema.ts; the decider's
 * own settings (`replicationSettings`) are also the options of `@webpp/origin/replication`
 * (features/replication.ts). The load table's window stays webppOrigin's: every server of a
 * cluster measures its load for its peers' records, whether it decides or not.
 */
import { Type } from 'typebox';
import { defaulted } from './resolved.js';

const MiB = 1024 * 1024;
const group = 'Replication';
const pathPrefix = { type: 'string', pattern: '^/[^?#\\s]*$', patternText: 'a path starting with /', maxLength: 1024 } as const;

const autoReplicateSwitch = {
  autoReplicate: defaulted(
    Type.Boolean({
      default: false,
      description:
        'Load-driven replication on this server: when its load exceeds the cluster\'s, it places replicas of its hot resources on the least-loaded peer, and withdraws them later. The same as registering `@webpp/origin/replication`. Off, nothing decides on this server (it neither places, withdraws nor recalls); it still serves the replicas others place on it. Needs `peers` and `clusterSecret`. Pause it at run time with `app.webpp.replication.enabled`.',
      cli: { group },
    }),
  ),
};

/** The options of the replication feature (features/replication.ts): the decider's settings. */
export const replicationSettings = {
  autoReplicatePrefixes: defaulted(
    Type.Array(Type.String(pathPrefix), {
      maxItems: 256,
      default: ['/'],
      description: 'Path prefixes whose resources may be replicated automatically (a resource qualifies when its path starts with one). Narrow it to the folders of large, static resources (`/img/`, `/assets/`).',
      cli: { group, flag: 'auto-replicate-prefix', arg: 'path' },
    }),
  ),
  autoReplicatePinned: defaulted(
    Type.Array(Type.String(pathPrefix), {
      maxItems: 256,
      default: ['/'],
      description: "Entry points never replicated (Algorithm 1, step 2): exact paths, or prefixes ending with `*` (`/landing/*`).",
      cli: { group, flag: 'auto-replicate-pin', arg: 'path' },
    }),
  ),
  autoReplicatePinPages: defaulted(
    Type.Boolean({
      default: true,
      description:
        'Also pin every HTML page (a path ending in `/` or in `.html`, `.htm`, `.xhtml`, `.xht` or `.shtml`, or whose last segment has no extension): any page may be reached from outside (a bookmark, a search engine), so pages stay home and their embedded resources move.',
      cli: { group },
    }),
  ),
  replicationIntervalMs: defaulted(
    Type.Integer({
      minimum: 10,
      maximum: 3_600_000,
      default: 10_000,
      description:
        'T_st: how often the decision runs; at most one placement and one withdrawal per period. Higher: slower balancing; lower: more decisions on noisier figures (Table 1: 10 s).',
      cli: { group },
    }),
  ),
  replicationCoopIntervalMs: defaulted(
    Type.Integer({
      minimum: 0,
      maximum: 86_400_000,
      default: 60_000,
      description:
        'T_coop: a peer accepts at most one automatic replica per period, from all homes together, so that its load figures catch up before the next. Higher: slower balancing; lower: risk of overloading a co-op (Table 1: 60 s).',
      cli: { group },
    }),
  ),
  replicationHomeMs: defaulted(
    Type.Integer({
      minimum: 0,
      maximum: 86_400_000,
      default: 300_000,
      description:
        'T_home: an automatic replica is withdrawn no sooner than this after it was placed, and is not placed again on the same co-op sooner than this after it was withdrawn (no flaps). Higher: steadier, slower to adapt (Table 1: 300 s).',
      cli: { group },
    }),
  ),
  replicationOverloadRatio: defaulted(
    Type.Number({
      minimum: 0,
      maximum: 100,
      default: 0.25,
      description:
        "A server places replicas when its load exceeds the cluster's mean by this ratio (load > (1 + ratio) × mean). Higher: fewer, later placements; lower: more placements on small imbalances.",
      cli: { group, arg: 'ratio' },
    }),
  ),
  replicationLoadMetric: defaulted(
    Type.Enum(['requests', 'bytes', 'utilisation'], {
      default: 'requests',
      description:
        "Load metric compared between servers: requests/s (DCWS's connections per second, best for small resources), bytes/s (large resources), or utilisation (the busy share the server pushes in Server-Timing util: event loop and concurrency slots).",
      cli: { group, arg: 'metric' },
    }),
  ),
  replicationMinLoad: defaulted(
    Type.Number({
      minimum: 0,
      default: 1,
      description: "A server whose load (in the metric's unit: requests/s, bytes/s, or utilisation in [0, 1]) is below this places nothing, however uneven the cluster. With the utilisation metric set it below 1 (e.g. 0.5): at 1 only a server busy all the time places replicas.",
      cli: { group, arg: 'load' },
    }),
  ),
  replicationHitThreshold: defaulted(
    Type.Integer({
      minimum: 1,
      default: 100,
      description:
        'T of Algorithm 1: only resources with at least this many hits in the window are candidates; when none has, T is halved until some qualify (down to 1 hit).',
      cli: { group, arg: 'hits' },
    }),
  ),
  replicationMaxPerCoop: defaulted(
    Type.Integer({ minimum: 0, default: 100, description: 'Most automatic replicas one peer holds (from all homes). Lower it to keep more of each peer for its own content.', cli: { group, arg: 'count' } }),
  ),
  replicationMaxBytesPerCoop: defaulted(
    Type.Integer({
      minimum: 0,
      default: 256 * MiB,
      description: 'Most bytes of automatic replicas one peer holds (from all homes; sizes as measured by their homes). Lower it for peers with little memory or disk.',
      cli: { group, arg: 'bytes' },
    }),
  ),
};

/** The load table's window: webppOrigin's (compose/parts.ts), the figures of every server's load record. */
const loadWindow = {
  replicationWindowMs: defaulted(
    Type.Integer({
      minimum: 1000,
      maximum: 3_600_000,
      default: 60_000,
      description: 'Sliding window of the load table (hits and bytes per resource, requests/s per server). DCWS used requests per minute.',
      cli: { group },
    }),
  ),
};

export const replicationOptionProperties = { ...autoReplicateSwitch, ...replicationSettings, ...loadWindow };
