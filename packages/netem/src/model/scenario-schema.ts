/**
 * The scenario file format (docs/evaluation.md, "Scenario files"), each field defined once
 * as a TypeBox schema with its default and description. The TypeScript types, the
 * validation (scenario.ts) and the field tables in docs/evaluation.md
 * (`npm run docs:options`) derive from it. Defaults are documented here and applied where
 * the value is used (resolveWorkload, the link model), so a parsed scenario is what the
 * file says.
 */
import { Type, type Static } from 'typebox';

export const SCENARIO_FORMAT_VERSION = 1;

export const DISTRIBUTION_NAMES = ['constant', 'uniform', 'normal', 'lognormal', 'exponential', 'pareto'] as const;
export const DEFAULT_PARETO_SHAPE = 2.5;

/**
 * What an outage does to connections:
 * - "reset": connections are accepted and immediately reset (TCP RST); in-flight requests
 *   are reset at the outage start. The client sees an instant network error.
 * - "refuse": the listening socket is closed, so connects get ECONNREFUSED; in-flight
 *   requests are reset. The port is bound again when the outage ends.
 * - "hang": connections are accepted and requests read but never answered (a black hole);
 *   in-flight responses freeze. Hung connections are reset when the outage ends.
 */
export const OUTAGE_MODES = ['reset', 'refuse', 'hang'] as const;
/** Where a stall happens: before the response's first byte, or part-way through its body. */
export const STALL_PHASES = ['first-byte', 'body'] as const;
export const TRANSITIONS = ['step', 'linear'] as const;

/** Server names become host labels (a harness maps "A" to a.localhost), so keep them simple. */
export const SERVER_NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_-]{0,31}$/;

const nonNegativeMs = { minimum: 0 } as const;

export const DistributionSchema = Type.Object(
  {
    distribution: Type.Enum([...DISTRIBUTION_NAMES], { description: 'Shape of the distribution (table below).' }),
    meanMs: Type.Number({ ...nonNegativeMs, description: 'Mean of the distribution, before clamping.' }),
    stdDevMs: Type.Optional(Type.Number({ ...nonNegativeMs, default: 0, description: 'Standard deviation, for `uniform`, `normal` and `lognormal`.' })),
    shape: Type.Optional(
      Type.Number({ exclusiveMinimum: 1, default: DEFAULT_PARETO_SHAPE, description: 'Tail index α > 1 of `pareto` (smaller = heavier tail).' }),
    ),
    minMs: Type.Optional(Type.Number({ ...nonNegativeMs, default: 0, description: 'Lower clamp of the draws: a delay is never negative.' })),
    maxMs: Type.Optional(Type.Number({ ...nonNegativeMs, description: 'Upper clamp of the draws; none by default.' })),
  },
  { additionalProperties: false, description: 'A random duration; draws are clamped to [minMs, maxMs].' },
);

/** A duration: a constant number of milliseconds, or a distribution. */
// Only its type is used (DurationSpec): the schemas spell the union out to carry their own descriptions.
const _DurationSchema = Type.Union([Type.Number(nonNegativeMs), DistributionSchema]);

export const StallSchema = Type.Object(
  {
    probability: Type.Number({ minimum: 0, maximum: 1, description: 'Probability that one request stalls.' }),
    durationMs: Type.Union([Type.Number(nonNegativeMs), DistributionSchema], { description: 'How long a stall lasts: milliseconds or a distribution.' }),
    phase: Type.Optional(
      Type.Enum([...STALL_PHASES], {
        default: 'first-byte',
        description: '`"first-byte"`: before the response starts (think of a lost SYN); `"body"`: after a uniformly drawn fraction of its body.',
      }),
    ),
  },
  { additionalProperties: false, description: 'Occasional stalls of a link.' },
);

const linkFields = {
  delayMs: Type.Union([Type.Number(nonNegativeMs), DistributionSchema], {
    description: "Round-trip delay added to every request's first byte: milliseconds or a distribution. Required in a server's `link`.",
  }),
  bandwidthBytesPerSec: Type.Optional(
    Type.Union([Type.Number({ exclusiveMinimum: 0 }), Type.Null()], { default: null, description: 'Response throughput per request; `null` = unlimited.' }),
  ),
  stall: Type.Optional(Type.Union([StallSchema, Type.Null()], { default: null, description: 'Occasional stalls (below); `null` = none.' })),
};

/** The state of one emulated link. */
export const LinkSchema = Type.Object(linkFields, { additionalProperties: false, description: 'The state of one emulated link.' });
/** Some fields of a link: a schedule entry or a runtime update changes only these. */
export const PartialLinkSchema = Type.Partial(LinkSchema, { additionalProperties: false });

export const ScheduleEntrySchema = Type.Object(
  {
    atMs: Type.Number({ ...nonNegativeMs, description: 'Scenario time of the change; entries in non-decreasing order.' }),
    transition: Type.Optional(
      Type.Enum([...TRANSITIONS], {
        default: 'step',
        description: '`"step"`: the change takes effect at `atMs`; `"linear"`: numeric parameters ramp from their values at the previous entry (or t = 0) to these at `atMs`.',
      }),
    ),
    link: Type.Partial(LinkSchema, { additionalProperties: false, description: 'The link fields that change.' }),
  },
  { additionalProperties: false, description: 'A change of the link at a point in scenario time.' },
);

export const OutageWindowSchema = Type.Object(
  {
    fromMs: Type.Number({ ...nonNegativeMs, description: 'Start of the outage (scenario time).' }),
    toMs: Type.Number({ ...nonNegativeMs, description: 'End of the outage; after `fromMs`. Windows of one server must not overlap.' }),
    mode: Type.Optional(Type.Enum([...OUTAGE_MODES], { default: 'reset', description: 'What the outage does to connections (table below).' })),
  },
  { additionalProperties: false, description: 'A window in which the server is unreachable.' },
);

export const BrownoutWindowSchema = Type.Object(
  {
    fromMs: Type.Number({ ...nonNegativeMs, description: 'Start of the brownout (scenario time).' }),
    toMs: Type.Number({ ...nonNegativeMs, description: 'End of the brownout; after `fromMs`.' }),
    errorProbability: Type.Number({ minimum: 0, maximum: 1, description: 'Share of requests answered at once (after the round trip) with `status` and no body.' }),
    status: Type.Optional(Type.Integer({ minimum: 500, maximum: 599, default: 503, description: 'The quick error status.' })),
  },
  { additionalProperties: false, description: 'A window in which the server sheds some requests with a quick 5xx.' },
);

/**
 * How a server's `bandwidthBytesPerSec` applies to its concurrent responses: each its own
 * (the paper's model, one request at a time), or one link shared equally by every response
 * in flight on it (processor sharing, as TCP flows on one bottleneck roughly share it).
 */
export const LINK_SHARINGS = ['per-response', 'shared'] as const;

export const ServerScenarioSchema = Type.Object(
  {
    label: Type.Optional(Type.String({ description: 'Human-readable description, e.g. "Stanford (US west)".' })),
    link: LinkSchema,
    linkSharing: Type.Optional(
      Type.Enum([...LINK_SHARINGS], {
        default: 'per-response',
        description: '`"per-response"`: every response gets the whole bandwidth; `"shared"`: concurrent responses share it equally (the emulator interleaves their 20 ms slices on one link).',
      }),
    ),
    schedule: Type.Optional(Type.Array(ScheduleEntrySchema, { default: [], description: 'Changes of the link over time.' })),
    outages: Type.Optional(Type.Array(OutageWindowSchema, { default: [], description: 'Outage windows.' })),
    brownouts: Type.Optional(
      Type.Array(BrownoutWindowSchema, { default: [], description: 'Windows of quick 5xx answers to a share of requests.' }),
    ),
  },
  { additionalProperties: false, description: 'One replica server: its link at t = 0, changes over time, outages.' },
);

export const WorkloadSchema = Type.Object(
  {
    clients: Type.Optional(
      Type.Integer({ minimum: 1, maximum: 10_000, default: 3, description: 'Concurrent clients, each sending requests one after another (paper Section 6.1).' }),
    ),
    fileSizesBytes: Type.Optional(
      Type.Array(Type.Integer({ minimum: 0 }), {
        minItems: 1,
        default: [512, 5 * 1024, 50 * 1024, 500 * 1024],
        description: "Resource sizes; client requests cycle through them. Default: the paper's 0.5, 5, 50 and 500 KB.",
      }),
    ),
    requestsPerClient: Type.Optional(Type.Integer({ minimum: 1, description: 'Stop each client after this many requests; no count bound by default.' })),
    durationMs: Type.Optional(
      Type.Number({ exclusiveMinimum: 0, description: "Stop issuing requests at this scenario time. Default: the scenario's `durationMs` when there is no count bound." }),
    ),
    thinkTimeMs: Type.Optional(Type.Number({ ...nonNegativeMs, default: 0, description: "Pause between a response and the client's next request." })),
    requestTimeoutMs: Type.Optional(
      Type.Number({ exclusiveMinimum: 0, default: 30_000, description: 'A request with no complete response after this long counts as failed.' }),
    ),
    failurePauseMs: Type.Optional(
      Type.Number({
        ...nonNegativeMs,
        default: 1000,
        description: 'After a failed request the client waits this long before its next one, so a refusing server cannot spin a client in zero time.',
      }),
    ),
  },
  { additionalProperties: false, description: 'The workload a harness drives through the scenario.' },
);

export const ScenarioSchema = Type.Object(
  {
    $schema: Type.Optional(Type.String({ description: 'Ignored: lets editors find a JSON schema.' })),
    formatVersion: Type.Literal(SCENARIO_FORMAT_VERSION, { description: 'Format version: `1`.' }),
    name: Type.String({ minLength: 1, description: 'Short name, e.g. `"peak"`.' }),
    description: Type.Optional(Type.String({ description: 'What happens in the scenario.' })),
    durationMs: Type.Number({ exclusiveMinimum: 0, description: 'Length of the scenario timeline; after it the last link state persists.' }),
    seed: Type.Optional(Type.Union([Type.Number(), Type.String()], { default: 0, description: 'Default seed of runs that do not pass their own.' })),
    servers: Type.Record(Type.String(), ServerScenarioSchema, {
      minProperties: 1,
      description: 'Replica servers by name (`"A"`, `"B"`, …), in replica order. Names match `[A-Za-z0-9][A-Za-z0-9_-]{0,31}`.',
    }),
    workload: Type.Optional(WorkloadSchema),
  },
  { additionalProperties: false, description: 'A scenario file.' },
);

export type DistributionSpec = Static<typeof DistributionSchema>;
export type DistributionName = DistributionSpec['distribution'];
export type DurationSpec = Static<typeof _DurationSchema>;
export type StallSpec = Static<typeof StallSchema>;
export type StallPhase = NonNullable<StallSpec['phase']>;
export type LinkProfile = Static<typeof LinkSchema>;
export type ScheduleEntry = Static<typeof ScheduleEntrySchema>;
export type Transition = NonNullable<ScheduleEntry['transition']>;
export type OutageWindow = Static<typeof OutageWindowSchema>;
export type OutageMode = NonNullable<OutageWindow['mode']>;
export type BrownoutWindow = Static<typeof BrownoutWindowSchema>;
export type LinkSharing = NonNullable<Static<typeof ServerScenarioSchema>['linkSharing']>;
export type ServerScenario = Static<typeof ServerScenarioSchema>;
export type WorkloadSpec = Static<typeof WorkloadSchema>;
export type Scenario = Static<typeof ScenarioSchema>;
